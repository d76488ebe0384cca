//! `choudoufu migrate`: a stock state taken into the estate, with its counts.

use engine::diag;
use std::process::ExitCode;

/// `choudoufu migrate`: exit 0 when nothing failed.
pub(crate) fn run_migrate(state: &std::path::Path, no_color: bool) -> ExitCode {
    let style = diag::Style::new(!no_color);
    crate::cli::in_workspace(&[], crate::cli::Ui::Human(style), async |root, ws| {
        if let Err(d) =
            engine::planner::configure_providers(&ws.tree.module, ws.vars.clone(), &mut ws.sessions)
                .await
        {
            eprint!("{}", diag::render_all(&d, ws.tree.module.sources(), style));
            return ExitCode::FAILURE;
        }
        let store = match ws
            .open_records(root, true, &mut crate::cli::plan::say_records)
            .await
        {
            Ok(s) => s,
            Err(d) => {
                eprint!("{}", diag::render_all(&d, ws.tree.module.sources(), style));
                return ExitCode::FAILURE;
            }
        };
        println!(
            "Migrating {} into estate \"{}\", its records kept in {}:",
            state.display(),
            ws.settings.estate,
            store.place()
        );
        let mut missed = Vec::new();
        let mut progress = |line: engine::migrate::Progress| {
            println!("  {line}");
            if !line.outcome.accounted() {
                missed.push(line.to_string());
            }
        };
        match engine::migrate::migrate(
            state,
            &ws.settings.estate,
            !ws.settings.strict.refuse_secrets,
            &mut ws.sessions,
            &store,
            &mut progress,
        )
        .await
        {
            Ok(c) => {
                if !missed.is_empty() {
                    eprintln!(
                        "\nError: {} instance(s) of the state were not taken into the estate\n\nThe next plan cannot find them by the estate's marker or record, and would propose creating them again:\n{}",
                        missed.len(),
                        missed.iter().map(|m| format!("  {m}")).collect::<Vec<_>>().join("\n")
                    );
                }
                println!(
                    "\nMigrate complete! {} newly stamped, {} already stamped, {} recorded, {} failed, {} skipped.",
                    c.stamped, c.already, c.recorded, c.failed, c.skipped
                );
                if missed.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }
            Err(d) => {
                eprint!("{}", diag::render_all(&d, &Default::default(), style));
                ExitCode::FAILURE
            }
        }
    })
}
