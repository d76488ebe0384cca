//! terraform's JSON configuration syntax: a `.tf.json` root reads as the
//! `.tf` root it rewrites, and `choudoufu console` in a root mixing `.tf`,
//! `.tf.json` and a JSON override file answers as `terraform console` does.

use crate::console_corpus::answer;
use crate::support::terraform;
use engine::config::{load, Module};
use std::collections::BTreeSet;
use std::path::Path;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/json")
        .join(name)
}

fn load_clean(dir: &Path) -> Module {
    let (module, diags) = load(dir);
    assert!(!diags.has_errors(), "{}: {diags:?}", dir.display());
    module
}

/// What a user reads off a block: its address, count, provider, ignored
/// changes and everything it refers to.
fn resources(m: &Module) -> Vec<String> {
    m.resources
        .values()
        .map(|r| {
            let refs: BTreeSet<String> = r
                .config
                .references()
                .iter()
                .chain(
                    r.count
                        .iter()
                        .flat_map(|c| c.references())
                        .collect::<Vec<_>>()
                        .iter(),
                )
                .map(|x| x.target.to_string())
                .collect();
            let ignored = match &r.lifecycle.ignore_changes {
                engine::config::IgnoreChanges::None => String::new(),
                engine::config::IgnoreChanges::All => "all".to_string(),
                engine::config::IgnoreChanges::Paths(p) => format!("{} paths", p.len()),
            };
            format!(
                "{} count={} provider={} ignore_changes={ignored} refs={refs:?}",
                r.key,
                r.count.is_some(),
                r.provider_ref()
            )
        })
        .collect()
}

#[test]
fn json_rewrite_of_the_estate_root_reads_as_the_original() {
    let original = load_clean(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../estates/reference-aws-stateful"),
    );
    let rewrite = load_clean(&fixture("reference-aws-stateful"));
    assert_eq!(resources(&rewrite), resources(&original));
    assert_eq!(
        rewrite.locals.keys().collect::<Vec<_>>(),
        original.locals.keys().collect::<Vec<_>>()
    );
    let providers = |m: &Module| {
        m.required_providers
            .iter()
            .map(|(k, p)| (k.clone(), p.source.clone(), p.version.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(providers(&rewrite), providers(&original));
    assert_eq!(rewrite.required_version, original.required_version);
    assert_eq!(
        rewrite.providers.keys().collect::<Vec<_>>(),
        original.providers.keys().collect::<Vec<_>>()
    );
}

#[test]
fn console_in_a_json_root_answers_as_terraform_console() {
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(fixture("console")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    // The console reads its CLI configuration from here; an empty one
    // keeps terraform from warning about a missing file.
    std::fs::write(dir.path().join("terraformrc"), "").unwrap();
    let exprs = [
        "var.region",
        "var.sizes",
        "var.pattern",
        "var.settings",
        "local.prefix",
        "local.names",
        "local.total",
        "local.label",
        "local.literal",
        "local.nested",
        "local.overridden",
        "var.nope",
    ];
    let ours = Path::new(env!("CARGO_BIN_EXE_choudoufu"));
    let mut differ = Vec::new();
    for e in exprs {
        let theirs = answer(&terraform(), dir.path(), e);
        let mine = answer(ours, dir.path(), e);
        println!("{e}\n  terraform: {theirs}\n  choudoufu: {mine}");
        if theirs != mine {
            differ.push(format!("{e}:\n  terraform: {theirs}\n  choudoufu: {mine}"));
        }
    }
    assert!(differ.is_empty(), "answers differ:\n{}", differ.join("\n"));
}
