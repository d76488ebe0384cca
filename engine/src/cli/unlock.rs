//! `choudoufu force-unlock`: a lock left by a killed run, broken by its ID.

use std::io::Write;

/// `choudoufu force-unlock LOCK_ID`.
pub(crate) fn force_unlock(lock_id: &str, force: bool) -> anyhow::Result<()> {
    use engine::provider::plugin::LaunchOptions;
    use engine::workspace::Workspace;
    if !force {
        println!("Do you really want to force-unlock?\n  choudoufu will remove the lock on the estate, so another run may start.\n  Only 'yes' will be accepted to confirm.\n");
        print!("  Enter a value: ");
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if answer.trim() != "yes" {
            anyhow::bail!("force-unlock cancelled");
        }
    }
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let root = std::env::current_dir()?;
    runtime.block_on(async {
        let mut ws = Workspace::open(&root, &[], &env, LaunchOptions::from_env())
            .await
            .map_err(|e| anyhow::anyhow!("{}", e.diagnostics))?;
        let result = async {
            engine::planner::configure_providers(
                &ws.tree.module,
                ws.vars.clone(),
                &mut ws.sessions,
            )
            .await
            .map_err(|d| anyhow::anyhow!("{d}"))?;
            let aws = engine::bind::aws::default_provider();
            let provider = ws
                .sessions
                .get(&aws)
                .await
                .map_err(|d| anyhow::anyhow!("{d}"))?
                .clone();
            let holder =
                engine::lock::force_unlock(&provider, &ws.settings.estate, lock_id).await?;
            println!(
                "The estate lock has been successfully unlocked: it was held by {} ({}, since {}).",
                holder.who, holder.operation, holder.created
            );
            anyhow::Ok(())
        }
        .await;
        ws.sessions.close().await;
        result
    })
}
