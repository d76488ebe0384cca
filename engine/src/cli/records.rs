//! `choudoufu records list`: what the estate's record store holds, as
//! `terraform state list` lists a state; and the store's opening for the
//! commands that only read it.

use crate::report;
use engine::diag;
use engine::record::RecordStore;
use std::process::ExitCode;

/// Opens the root in the working directory and its record store (read
/// only), and hands the store to `f`. The providers are stopped after.
pub(crate) fn with_store(style: diag::Style, f: impl FnOnce(&RecordStore) -> ExitCode) -> ExitCode {
    use engine::provider::plugin::LaunchOptions;
    use engine::workspace::Workspace;
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return report(Err(e.into())),
    };
    let root = match std::env::current_dir() {
        Ok(r) => r,
        Err(e) => return report(Err(e.into())),
    };
    runtime.block_on(async {
        let mut ws = match Workspace::open(&root, &[], &env, LaunchOptions::from_env()).await {
            Ok(ws) => ws,
            Err(e) => {
                eprint!("{}", diag::render_all(&e.diagnostics, &e.sources, style));
                return ExitCode::FAILURE;
            }
        };
        let opened = ws
            .open_records(&root, false, &mut crate::cli::plan::say_records)
            .await;
        let code = match opened {
            Ok(store) => f(&store),
            Err(d) => {
                eprint!("{}", diag::render_all(&d, &ws.tree.sources(), style));
                ExitCode::FAILURE
            }
        };
        ws.sessions.close().await;
        code
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
        if json {
            let doc = serde_json::json!({
                "place": store.place(),
                "records": records,
                "outputs": outputs.keys().collect::<Vec<_>>(),
            });
            println!(
                "{}",
                serde_json::to_string_pretty(&doc).expect("records serialize")
            );
        } else {
            for r in &records {
                println!("{}", r.address);
            }
        }
        ExitCode::SUCCESS
    })
}
