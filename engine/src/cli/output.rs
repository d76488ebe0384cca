//! `choudoufu output`: the root outputs the last apply left, as `terraform
//! output` prints them.

use engine::diag;

use std::process::ExitCode;

/// `choudoufu output [-json | -raw] [NAME]`.
pub(crate) fn output(name: Option<&str>, json: bool, raw: bool, no_color: bool) -> ExitCode {
    use diag::Diagnostic;
    let style = diag::Style::new(!no_color);
    let fail = |d: Diagnostic| {
        eprint!(
            "{}",
            diag::render_all(&d.into(), &diag::Sources::default(), style)
        );
        ExitCode::FAILURE
    };
    let mut read = None;
    let code = crate::cli::records::with_store(style, |store| {
        read = Some(store.outputs());
        ExitCode::SUCCESS
    });
    let outputs = match read {
        Some(Ok(o)) => o,
        Some(Err(e)) => return fail(Diagnostic::error("Unreadable record", e.to_string())),
        None => return code,
    };
    let not_kept = |name: &str| {
        Diagnostic::error(
            format!("Output \"{name}\" is sensitive and not kept"),
            "The record store keeps only a digest of a sensitive output, so its value cannot be printed. Read it where it comes from, or make the output non-sensitive.",
        )
    };
    let Some(name) = name else {
        if raw {
            return fail(Diagnostic::error(
                "Output name required",
                "You must give the name of a single output value when using the -raw option.",
            ));
        }
        if json {
            let mut all = serde_json::Map::new();
            for (name, o) in &outputs {
                let mut entry = serde_json::Map::new();
                entry.insert("sensitive".into(), o.sensitive.into());
                entry.insert("type".into(), o.type_json.clone());
                match &o.value {
                    Some(v) => {
                        entry.insert("value".into(), v.clone());
                    }
                    None => {
                        let d = not_kept(name);
                        let warn = Diagnostic::warning(d.summary, d.detail);
                        eprint!(
                            "{}",
                            diag::render_all(&warn.into(), &diag::Sources::default(), style)
                        );
                    }
                }
                all.insert(name.clone(), entry.into());
            }
            let all = serde_json::Value::Object(all);
            println!("{}", engine::plan::json::go_text(&all, true));
            return ExitCode::SUCCESS;
        }
        if outputs.is_empty() {
            let warn = Diagnostic::warning(
                "No outputs found",
                "The state file either has no outputs defined, or all the defined outputs are empty. Please define an output in your configuration with the `output` keyword and run `terraform refresh` for it to become available. If you are using interpolation, please verify the interpolated value is not empty. You can use the `terraform console` command to assist.",
            );
            eprint!(
                "{}",
                diag::render_all(&warn.into(), &diag::Sources::default(), style)
            );
        }
        for (name, o) in &outputs {
            match o.sensitive {
                true => println!("{name} = <sensitive>"),
                false => println!("{name} = {}", engine::eval::format::console(&o.value())),
            }
        }
        return ExitCode::SUCCESS;
    };
    let Some(o) = outputs.get(name) else {
        return fail(Diagnostic::error(
            format!("Output \"{name}\" not found"),
            "The output variable requested could not be found in the state file. If you recently added this to your configuration, be sure to run `terraform apply`, since the state won't be updated with new output variables until that command is run.",
        ));
    };
    let (Some(value_json), false) = (&o.value, o.sensitive) else {
        return fail(not_kept(name));
    };
    let value = o.value();
    if json {
        println!("{}", engine::plan::json::go_text(value_json, false));
    } else if raw {
        match (value.as_str(), &value.kind) {
            (Some(s), _) => print!("{s}"),
            (None, engine::value::Kind::Number(_) | engine::value::Kind::Bool(_)) => {
                print!("{}", engine::eval::format::console(&value));
            }
            _ => {
                return fail(Diagnostic::error(
                    "Unsupported value for raw output",
                    format!(
                        "The -raw option only supports strings, numbers, and boolean values, but output value \"{name}\" is {}.\n\nUse the -json option for machine-readable representations of output values that have complex types.",
                        value.ty().friendly_name()
                    ),
                ));
            }
        }
    } else {
        println!("{}", engine::eval::format::console(&value));
    }
    ExitCode::SUCCESS
}
