//! The identity catalogue against the real aws provider's schema: every
//! attribute, data source and parent an entry names exists, and every type
//! an entry says a live test proves is declared by that test's root.

use engine::bind::catalogue::{Catalogue, Entry, Identity, UnderFrom, FACTS};
use engine::provider::cache::SchemaCache;
use engine::provider::load_schema;
use engine::provider::plugin::LaunchOptions;
use engine::provider::schema::{ProviderSchema, Schema};
use std::path::Path;

use crate::support::aws_binary;

/// The roots the live round-trip tests run, by name.
pub fn roots_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalogue")
}

/// What is wrong with one entry, against the type's schema.
fn problems(name: &str, e: &Entry, schema: &ProviderSchema) -> Vec<String> {
    let mut out = Vec::new();
    let Some(ty) = schema.resources.get(name) else {
        return vec![format!("{name}: the provider has no such resource type")];
    };
    let has = |s: &Schema, a: &str| {
        s.block.attributes.contains_key(a) || s.block.block_types.contains_key(a)
    };
    let placeholder = |what: &str, f: &str, out: &mut Vec<String>| {
        if !(FACTS.contains(&f) || f == "arn" || has(ty, f) || e.joins.contains_key(f)) {
            out.push(format!(
                "{name}: {what} names {{{f}}}, which is no attribute of it"
            ));
        }
    };
    for t in [&e.id, &e.arn].into_iter().flatten() {
        for f in t.fields() {
            placeholder("a template", f, &mut out);
        }
    }
    for f in e.defaults.keys() {
        placeholder("defaults", f, &mut out);
    }
    for a in &e.config_only {
        if !has(ty, a) {
            out.push(format!(
                "{name}: config_only names {a}, which is no attribute of it"
            ));
        }
    }
    if let Some(p) = &e.parent {
        if !has(ty, &p.attr) {
            out.push(format!(
                "{name}: its parent attribute {} is no attribute of it",
                p.attr
            ));
        }
        if !schema.resources.contains_key(&p.type_name) {
            out.push(format!(
                "{name}: its parent type {} does not exist",
                p.type_name
            ));
        }
    }
    if let Some(l) = &e.lookup {
        match schema.data_sources.get(&l.data_source) {
            None => out.push(format!(
                "{name}: lookup data source {} does not exist",
                l.data_source
            )),
            Some(ds) => {
                for (arg, t) in &l.args {
                    if !has(ds, arg) {
                        out.push(format!("{name}: {} has no argument {arg}", l.data_source));
                    }
                    for f in t.fields() {
                        placeholder("a lookup argument", f, &mut out);
                    }
                }
                if !has(ds, &l.result) {
                    out.push(format!(
                        "{name}: {} has no attribute {}",
                        l.data_source, l.result
                    ));
                }
            }
        }
    }
    if let Some(l) = &e.list {
        match l
            .data_source
            .as_deref()
            .map(|d| (d, schema.data_sources.get(d)))
        {
            // An API listing: the catalogue's own unit test checks its name.
            None => placeholder("list", &l.fills, &mut out),
            Some((d, None)) => out.push(format!("{name}: list data source {d} does not exist")),
            Some((d, Some(ds))) if !has(ds, &l.result) => {
                out.push(format!("{name}: {d} has no attribute {}", l.result))
            }
            Some((d, Some(ds))) => {
                placeholder("list", &l.fills, &mut out);
                if l.by_marker && !has(ds, "tags") {
                    out.push(format!(
                        "{name}: {d} lists by marker, but has no tags argument"
                    ));
                }
            }
        }
    }
    if let Some(p) = &e.parts {
        if let Some(d) = &p.data_source {
            match schema.data_sources.get(d) {
                None => out.push(format!("{name}: parts data source {d} does not exist")),
                Some(ds) => {
                    for arg in p.args.keys().chain(&p.list) {
                        if !has(ds, arg) {
                            out.push(format!("{name}: {d} has no attribute {arg}"));
                        }
                    }
                }
            }
        }
    }
    for (join, j) in &e.joins {
        for a in j.of.iter().chain(j.flags.keys()) {
            if !has(ty, a) {
                out.push(format!(
                    "{name}: the join {join} reads {a}, which is no attribute of it"
                ));
            }
        }
    }
    if let Some(u) = &e.under {
        match u.from() {
            Some(UnderFrom::Api(api)) if !engine::bind::aws_api::is_listing(api) => out.push(
                format!("{name}: under names {api}, no listing the engine knows"),
            ),
            Some(UnderFrom::DataSource { name: ds, list }) => {
                let holds = schema.data_sources.get(ds).is_some_and(|d| {
                    d.block
                        .attributes
                        .get(list)
                        .is_some_and(|a| a.ty.element().is_some_and(|t| !t.is_primitive()))
                });
                if !holds {
                    out.push(format!(
                        "{name}: under reads data.{ds}.{list}, which is no list of objects"
                    ));
                }
                for arg in u.args.keys() {
                    if !schema.data_sources.get(ds).is_some_and(|d| has(d, arg)) {
                        out.push(format!("{name}: {ds} has no argument {arg}"));
                    }
                }
            }
            _ => {}
        }
        for t in u.args.values().chain(u.matches.values()) {
            for f in t.fields() {
                placeholder("an under template", f, &mut out);
            }
        }
    }
    if e.adopts && !has(ty, "tags") {
        out.push(format!(
            "{name}: adopts, but has no tags to carry the marker that tells an adopted object apart"
        ));
    }
    if let Some(a) = &e.absent_if {
        let first = a.attr.split('.').next().unwrap_or_default();
        if !has(ty, first) {
            out.push(format!(
                "{name}: absent_if reads {first}, which is no attribute of it"
            ));
        }
    }
    if let Some(root) = &e.proven {
        let dir = roots_dir().join(root);
        let declares = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .any(|f| {
                std::fs::read_to_string(f.path())
                    .is_ok_and(|t| t.contains(&format!("resource \"{name}\"")))
            });
        if !declares {
            out.push(format!(
                "{name}: proven by {root}, but no .tf file in {} declares it",
                dir.display()
            ));
        }
    }
    out
}

/// The pinned aws provider's schema, read through a cache of its own.
async fn aws_schema() -> ProviderSchema {
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = SchemaCache::new(cache_dir.path().to_path_buf());
    load_schema(&aws_binary(), Some(&cache), &LaunchOptions::from_env())
        .await
        .unwrap()
}

#[tokio::test]
async fn the_catalogue_names_only_what_the_provider_schema_has() {
    let schema = aws_schema().await;
    let catalogue = Catalogue::builtin();
    let mut all = Vec::new();
    let mut count = 0;
    for (name, e) in catalogue.entries() {
        count += 1;
        all.extend(problems(name, e, &schema));
    }
    assert!(all.is_empty(), "catalogue.toml:\n{}", all.join("\n"));
    eprintln!("{count} catalogue entries checked against the aws provider's schema");
}

/// How a plan finds a type's object with no record, as the catalogue
/// README's survey table words it: what `providers identity` prints after
/// the record, or, for a type nothing but its record finds, `nothing:` and
/// the reason the table gives.
fn found_with_no_record(ident: &Identity) -> String {
    if ident.record_only() {
        return "nothing:".into();
    }
    ident
        .found_by()
        .replace("its record; else ", "")
        .replace("; else its record", "")
}

#[tokio::test]
async fn the_survey_says_how_each_type_is_found_with_no_record() {
    let schema = aws_schema().await;
    let readme = std::fs::read_to_string(roots_dir().join("README.md")).unwrap();
    let mut wrong = Vec::new();
    let mut rows = 0;
    for line in readme.lines().filter(|l| {
        l.strip_prefix("| ")
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    }) {
        rows += 1;
        let cells: Vec<String> = line
            .split(" | ")
            .map(|c| c.trim_matches(['|', ' ']).replace("\\|", "|"))
            .collect();
        let name = cells[1].trim_matches('`');
        let ident = Identity::for_schema(name, &schema.resources[name]);
        let want = found_with_no_record(&ident);
        let said = cells.last().unwrap();
        let agrees = match want.as_str() {
            "nothing:" => said.len() > want.len() + 10 && said.starts_with(&want),
            _ => *said == want,
        };
        if !agrees {
            wrong.push(format!(
                "{name}: the table says {said:?}, the engine {want:?}"
            ));
        }
    }
    assert_eq!(rows, 100, "the survey table has its 100 rows");
    assert!(wrong.is_empty(), "README.md:\n{}", wrong.join("\n"));
}
