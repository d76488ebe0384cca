//! Workspaces, against stock terraform's on the same root: each is its own
//! estate, so a plan in one never binds, updates or sweeps another's
//! objects; `terraform.workspace` evaluates to the selected one; the list
//! lives in the live system, so a fresh clone selects what another
//! machine created; the refusals are terraform's. Real aws provider, real
//! moto, objects read back with the AWS CLI.

use crate::support::{aws_provider, flat, text, write_live, Moto, Workdir};
use std::process::Output;

const ESTATE: &str = "it-ws";

/// One parameter named after the workspace, one shared name pattern.
fn root(w: &Workdir, moto: &Moto) {
    std::fs::write(
        w.dir.path().join("main.tf"),
        format!(
            r#"{provider}
resource "aws_ssm_parameter" "p" {{
  name  = "/it-ws/${{terraform.workspace}}"
  type  = "String"
  value = "in ${{terraform.workspace}}"
}}

output "workspace" {{
  value = terraform.workspace
}}
"#,
            provider = aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
    write_live(w.dir.path(), ESTATE);
}

fn ok(o: &Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}", text(o));
    text(o)
}

fn tags(moto: &Moto, name: &str) -> serde_json::Value {
    crate::stateless::parameter_tags(moto, name).unwrap_or_else(|| panic!("no parameter {name}"))
}

#[test]
fn each_workspace_is_its_own_estate_as_stock_terraform_keeps_each_its_own_state() {
    let moto = Moto::start();
    let tf = crate::support::terraform();
    let ours = Workdir::new();
    root(&ours, &moto);
    ours.init();
    let stock = Workdir::new();
    root(&stock, &moto);
    ok(
        &stock.run(&tf, &["init", "-input=false", "-no-color"]),
        "terraform init",
    );

    // Before any workspace is made, both show and list the default alone.
    for (w, program) in [(&ours, None), (&stock, Some(&tf))] {
        let run = |args: &[&str]| match program {
            None => w.engine(args),
            Some(tf) => w.run(tf, args),
        };
        assert_eq!(ok(&run(&["workspace", "show"]), "show"), "default\n");
        assert_eq!(ok(&run(&["workspace", "list"]), "list"), "* default\n\n");
    }

    // The default workspace applies its parameter, in estate it-ws.
    ok(
        &ours.engine(&["apply", "-auto-approve"]),
        "apply in default",
    );
    assert_eq!(
        moto.parameter("/it-ws/default").as_deref(),
        Some("in default")
    );
    assert!(tags(&moto, "/it-ws/default")
        .to_string()
        .contains(r#"{"Key":"tofu-estate","Value":"it-ws"}"#));

    // A new workspace: terraform's words, selected, listed.
    let made = ok(&ours.engine(&["workspace", "new", "dev"]), "new dev");
    assert!(
        made.starts_with("Created and switched to workspace \"dev\"!"),
        "{made}"
    );
    let stock_made = ok(
        &stock.run(&tf, &["workspace", "new", "-no-color", "dev"]),
        "new dev",
    );
    assert!(stock_made.starts_with("Created and switched to workspace \"dev\"!"));
    for w in [&ours, &stock] {
        assert_eq!(
            std::fs::read_to_string(w.dir.path().join(".terraform/environment")).unwrap(),
            "dev"
        );
    }
    assert_eq!(
        ok(&ours.engine(&["workspace", "list"]), "list"),
        ok(&stock.run(&tf, &["workspace", "list"]), "list")
    );
    let again = ours.engine(&["workspace", "new", "dev"]);
    let stock_again = stock.run(&tf, &["workspace", "new", "-no-color", "dev"]);
    assert_eq!(again.status.code(), stock_again.status.code());
    assert!(
        text(&again).contains("Workspace \"dev\" already exists"),
        "{}",
        text(&again)
    );

    // In dev, the plan sees nothing of default's: one create, as stock's
    // plan in its empty workspace, of the parameter named after dev.
    let plan = ok(&ours.engine(&["plan", "-out", "dev.plan"]), "plan in dev");
    let stock_plan = ok(&stock.run(&tf, &["plan", "-no-color"]), "plan in dev");
    for p in [&plan, &stock_plan] {
        assert!(
            flat(p).contains("Plan: 1 to add, 0 to change, 0 to destroy."),
            "{p}"
        );
        assert!(p.contains("\"/it-ws/dev\""), "{p}");
    }
    ok(&ours.engine(&["apply", "dev.plan"]), "apply in dev");
    assert!(tags(&moto, "/it-ws/dev")
        .to_string()
        .contains(r#"{"Key":"tofu-estate","Value":"it-ws.dev"}"#));
    assert_eq!(
        moto.parameter("/it-ws/default").as_deref(),
        Some("in default")
    );
    let out = ok(&ours.engine(&["output", "-raw", "workspace"]), "output");
    assert_eq!(out, "dev");

    // A fresh clone on another machine: no local folder, the default
    // selected; the live list names dev, and selecting it finds its object.
    let clone = Workdir::new();
    root(&clone, &moto);
    clone.init();
    assert_eq!(
        ok(&clone.engine(&["workspace", "list"]), "list in a clone"),
        "* default\n  dev\n\n"
    );
    let replan = clone.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));
    let switched = ok(&clone.engine(&["workspace", "select", "dev"]), "select dev");
    assert_eq!(switched, "Switched to workspace \"dev\".\n");
    let replan = clone.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));

    // Refusals, on terraform's words and exit codes.
    for (args, seen) in [
        (
            vec!["workspace", "select", "nope"],
            "Workspace \"nope\" doesn't exist.",
        ),
        (
            vec!["workspace", "delete", "default"],
            "cannot delete default state",
        ),
        (
            vec!["workspace", "delete", "dev"],
            "Workspace \"dev\" is your active workspace.",
        ),
    ] {
        let mine = clone.engine(&args);
        let mut theirs = args.clone();
        theirs.insert(2, "-no-color");
        let theirs = stock.run(&tf, &theirs);
        assert_eq!(mine.status.code(), Some(1), "{args:?}: {}", text(&mine));
        assert_eq!(theirs.status.code(), Some(1), "{args:?}: {}", text(&theirs));
        assert!(
            flat(&text(&mine)).contains(&flat(seen)),
            "{args:?}: {}",
            text(&mine)
        );
        assert!(
            flat(&text(&theirs)).contains(&flat(seen)),
            "{args:?}: {}",
            text(&theirs)
        );
    }
    let bad = clone.engine(&["workspace", "new", "a/b"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad).contains("The workspace name \"a/b\" is not allowed."),
        "{}",
        text(&bad)
    );
    let overridden = clone
        .command(std::path::Path::new(env!("CARGO_BIN_EXE_choudoufu")))
        .args(["workspace", "select", "default", "-no-color"])
        .env("TF_WORKSPACE", "dev")
        .output()
        .unwrap();
    assert_eq!(overridden.status.code(), Some(1));
    assert!(text(&overridden).contains("overridden using the TF_WORKSPACE"));

    // dev still holds its object: deleting it is refused, naming it.
    ok(
        &clone.engine(&["workspace", "select", "default"]),
        "select default",
    );
    let refused = clone.engine(&["workspace", "delete", "dev"]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    let said = flat(&text(&refused));
    assert!(
        said.contains("Workspace is not empty") && said.contains("- aws_ssm_parameter.p"),
        "{said}"
    );

    // Destroyed in dev, it is deleted; default's object never moved.
    ok(&clone.engine(&["workspace", "select", "dev"]), "select dev");
    let destroyed = ok(&clone.engine(&["destroy", "-auto-approve"]), "destroy dev");
    assert!(
        flat(&destroyed).contains("Destroy complete! Resources: 1 destroyed."),
        "{destroyed}"
    );
    ok(
        &clone.engine(&["workspace", "select", "default"]),
        "select default",
    );
    let deleted = ok(&clone.engine(&["workspace", "delete", "dev"]), "delete dev");
    assert_eq!(deleted, "Deleted workspace \"dev\"!\n");
    assert_eq!(
        ok(&ours.engine(&["workspace", "list"]), "list"),
        "  default\n\n",
        "the first machine still selects dev, which is gone from the list"
    );
    assert_eq!(moto.parameter("/it-ws/dev"), None);
    assert_eq!(
        moto.parameter("/it-ws/default").as_deref(),
        Some("in default")
    );
    let last = clone.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(last.status.code(), Some(0), "{}", text(&last));
}
