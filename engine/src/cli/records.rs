//! `choudoufu records list`: what the estate's record store holds, as
//! `terraform state list` lists a state; and the store's opening for the
//! commands that only read it.

use engine::diag;
use engine::record::RecordStore;
use std::process::ExitCode;

/// Opens the root in the working directory and its record store (read
/// only), and hands the store to `f`. The providers are stopped after.
pub(crate) fn with_store(style: diag::Style, f: impl FnOnce(&RecordStore) -> ExitCode) -> ExitCode {
    crate::cli::in_workspace(&[], crate::cli::Ui::Human(style), async |root, ws| match ws
        .open_records(root, false, &mut crate::cli::plan::say_records)
        .await
    {
        Ok(store) => f(&store),
        Err(d) => {
            eprint!("{}", diag::render_all(&d, &ws.tree.sources(), style));
            ExitCode::FAILURE
        }
    })
}

/// `choudoufu records list [-json]`: one address a line, sorted; with
/// `-json`, where the store is, every record whole and the outputs' names.
pub(crate) fn list(json: bool, no_color: bool) -> ExitCode {
    let style = diag::Style::new(!no_color);
    with_store(style, |store| {
        let (records, outputs) = match (store.all(), store.outputs()) {
            (Ok(r), Ok(o)) => (r, o),
            (Err(e), _) | (_, Err(e)) => {
                let d = diag::Diagnostic::error("Unreadable record", e.to_string());
                eprint!(
                    "{}",
                    diag::render_all(&d.into(), &diag::Sources::default(), style)
                );
                return ExitCode::FAILURE;
            }
        };
        let text = if json {
            let doc = serde_json::json!({
                "place": store.place(),
                "records": records,
                "outputs": outputs.keys().collect::<Vec<_>>(),
            });
            let doc = serde_json::to_string_pretty(&doc).expect("records serialize");
            format!("{doc}\n")
        } else {
            records.iter().map(|r| format!("{}\n", r.address)).collect()
        };
        // A reader that stops early (`| head`) is not an error.
        match std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                eprintln!("Error: writing the records: {e}");
                ExitCode::FAILURE
            }
            _ => ExitCode::SUCCESS,
        }
    })
}
