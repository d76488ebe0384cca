//! `choudoufu providers`: the root's providers' schemas, and each resource
//! type's identity family.

use std::io::Write;

/// The schema of every provider the root in the working directory
/// requires, by source address.
fn root_schemas() -> anyhow::Result<Vec<(String, engine::provider::schema::ProviderSchema)>> {
    use engine::provider::{cache::SchemaCache, plugin::LaunchOptions, required_schemas};
    let root = std::env::current_dir()?;
    let cache = SchemaCache::from_env();
    // Current-thread: plugins must be launched from a thread that outlives
    // them (their parent-death signal follows the spawning thread).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    Ok(runtime.block_on(required_schemas(
        &root,
        cache.as_ref(),
        &LaunchOptions::from_env(),
    ))?)
}

/// `providers identity`: each resource type's family, how its objects are
/// found, and the live test that proves it.
pub(crate) fn providers_identity(json: bool, only: &[String]) -> anyhow::Result<()> {
    use engine::bind::aws;
    use engine::bind::catalogue::Family;
    let mut doc = serde_json::Map::new();
    let mut text = String::new();
    for (source, schema) in root_schemas()? {
        let is_aws = aws::is_aws(&source);
        let mut types = serde_json::Map::new();
        let mut rows = vec![[
            "TYPE".to_string(),
            "FAMILY".into(),
            "FOUND BY".into(),
            "PROVEN".into(),
        ]];
        let (mut catalogued, mut proven, mut record_only) = (0, 0, 0);
        for (name, s) in &schema.resources {
            if !only.is_empty() && !only.contains(name) {
                continue;
            }
            let ident = aws::identity(is_aws, name, Some(s));
            catalogued += usize::from(ident.catalogued);
            proven += usize::from(ident.entry.proven.is_some());
            record_only += usize::from(ident.record_only());
            let family = match &ident.family {
                Family::Part(p) => format!("part of {} ({})", p.type_name, p.attr),
                f => f.name().to_string(),
            };
            types.insert(
                name.clone(),
                serde_json::json!({
                    "family": ident.family.name(),
                    "parent": match &ident.family {
                        Family::Part(p) => serde_json::json!({"type": p.type_name, "attr": p.attr}),
                        _ => serde_json::Value::Null,
                    },
                    "found_by": ident.found_by(),
                    "record_only": ident.record_only(),
                    "catalogued": ident.catalogued,
                    "proven": ident.entry.proven,
                }),
            );
            rows.push([
                name.clone(),
                family,
                ident.found_by(),
                ident.entry.proven.clone().unwrap_or_else(|| "-".into()),
            ]);
        }
        text.push_str(&format!(
            "Provider {source}: {} resource types, {catalogued} in the catalogue, {proven} proven by a live test; {record_only} found by nothing but their records.\n\n",
            rows.len() - 1
        ));
        let widths: Vec<usize> = (0..4)
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            text.push_str(line.join("  ").trim_end());
            text.push('\n');
        }
        text.push('\n');
        doc.insert(source, serde_json::Value::Object(types));
    }
    let mut out = std::io::stdout().lock();
    let written = match json {
        true => writeln!(out, "{}", serde_json::json!({ "provider_identities": doc })),
        false => write!(out, "{text}"),
    };
    // A reader that stops early (`| head`) is not an error.
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

pub(crate) fn providers_schema() -> anyhow::Result<()> {
    use engine::provider::schema::TerraformSchemas;
    let schemas = root_schemas()?;
    let document = TerraformSchemas::new(schemas.iter().map(|(a, s)| (a.clone(), s)));
    let mut out =
        engine::plan::json::GoEscaped::new(std::io::BufWriter::new(std::io::stdout().lock()));
    let written = serde_json::to_writer(&mut out, &document)
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out))
        .and_then(|()| out.finish().map(|_| ()));
    // A reader that stops early (`| head`) is not an error.
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
