//! `-refresh-only` against stock terraform on the same root, each on its
//! own emulator: after an apply, configuration changes an argument and
//! adds an output. Both tools' refresh-only plans print the same text
//! (stock's "Refreshing state..." lines aside), both applies change no
//! object and print the same outputs, and the normal plan after still
//! proposes the change.

use crate::support::{aws_provider, terraform, text, write_live, Moto, Workdir};
use std::path::Path;

fn root(w: &Workdir, moto: &Moto, value: &str, output: bool) {
    let output = match output {
        true => "output \"version\" {\n  value = aws_ssm_parameter.p.version\n}\n",
        false => "",
    };
    std::fs::write(
        w.dir.path().join("main.tf"),
        format!(
            "{}\nresource \"aws_ssm_parameter\" \"p\" {{\n  name  = \"/refresh/p\"\n  type  = \"String\"\n  value = \"{value}\"\n  tags  = {{ app = \"refresh\" }}\n}}\n{output}",
            aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
}

/// What a command printed, with stock's refresh lines left out.
fn shown(out: &std::process::Output) -> String {
    text(out)
        .lines()
        .filter(|l| !l.contains(": Refreshing state..."))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn refresh_only_plans_and_applies_as_stock_does_and_changes_no_object() {
    let (stock_moto, our_moto) = (Moto::start(), Moto::start());
    let (sw, ow) = (Workdir::new(), Workdir::new());
    let ours = Path::new(env!("CARGO_BIN_EXE_choudoufu"));
    let tf = terraform();
    root(&sw, &stock_moto, "1", false);
    root(&ow, &our_moto, "1", false);
    write_live(ow.dir.path(), "refresh-only");
    for (w, program) in [(&sw, tf.as_path()), (&ow, ours)] {
        for args in [
            &["init", "-input=false", "-no-color"][..],
            &["apply", "-auto-approve", "-no-color"],
        ] {
            let out = w.run(program, args);
            assert!(out.status.success(), "{args:?}: {}", text(&out));
        }
    }
    root(&sw, &stock_moto, "2", true);
    root(&ow, &our_moto, "2", true);

    let plan = ["plan", "-refresh-only", "-no-color", "-detailed-exitcode"];
    let (s, o) = (sw.run(&tf, &plan), ow.run(ours, &plan));
    assert_eq!(o.status.code(), s.status.code(), "{}", text(&o));
    assert_eq!(o.status.code(), Some(2));
    // Stock adds its note on -out, which the engine's plans leave out.
    let stock_text = shown(&s);
    let stock_text = stock_text.split("\n─").next().unwrap();
    assert_eq!(shown(&o).trim_end(), stock_text.trim_end());
    assert!(stock_text.contains("+ version = 1"), "{stock_text}");

    let apply = ["apply", "-refresh-only", "-auto-approve", "-no-color"];
    let (s, o) = (sw.run(&tf, &apply), ow.run(ours, &apply));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(shown(&o).trim_end(), shown(&s).trim_end());
    for moto in [&stock_moto, &our_moto] {
        let p = moto.aws(&["ssm", "get-parameter", "--name", "/refresh/p"]);
        assert_eq!(p["Parameter"]["Value"], "1", "the object was changed");
    }
    // The change is still to make, and the output is kept.
    let plan = ["plan", "-no-color", "-detailed-exitcode"];
    assert_eq!(ow.run(ours, &plan).status.code(), Some(2));
    let out = ow.run(ours, &["output", "-no-color", "version"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");

    for (args, summary) in [
        (
            &["plan", "-refresh-only", "-destroy", "-no-color"][..],
            "Incompatible plan mode options",
        ),
        (
            &[
                "plan",
                "-refresh-only",
                "-replace=aws_ssm_parameter.p",
                "-no-color",
            ],
            "Unsupported plan mode",
        ),
    ] {
        let (s, o) = (sw.run(&tf, args), ow.run(ours, args));
        assert_eq!(o.status.code(), s.status.code(), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains(summary) && text(&s).contains(summary),
            "{}",
            text(&o)
        );
    }
}
