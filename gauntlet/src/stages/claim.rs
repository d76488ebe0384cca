//! Objects nothing but a record proves this estate's: no marker, and no
//! owner to vouch for them (an IAM group, which has no tags). With the
//! records gone the engine refuses each by address, never adopting it, and
//! its error gives the remedy, an `import` block. The stages that plan
//! without records check that refusal, then follow the remedy as a user
//! would, so that the rest of the plan is judged too: the plan must import
//! exactly the refused objects.

use std::fs;
use std::path::{Path, PathBuf};

use crate::choudoufu::{EngineError, EnginePlan};

use super::kit::io;
use super::StepError;

/// The file the import blocks go into, beside the root's own files.
pub(crate) const FILE: &str = "claimed_without_records.tf";

/// What marks the refusal of an object nothing but a record proves, and
/// the start of its remedy.
const NO_RECORD: &str = "carries no marker and no record of estate";
const REMEDY: &str = "add an import block for it (to = ";

/// One refused object: its address and the live object's ID, as the
/// error's remedy gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unclaimed {
    pub address: String,
    pub id: String,
}

/// The refused objects of a refused plan's output, when every error in it
/// is such a refusal and gives its remedy; otherwise the errors that are
/// not, on one line.
pub(crate) fn unclaimed(output: &str) -> Result<Vec<Unclaimed>, String> {
    // The engine wraps its errors' text: words are what count.
    let flat = output.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut found = Vec::new();
    let mut other = Vec::new();
    for error in flat.split("Error: ").skip(1) {
        match refused(error) {
            Some(u) => found.push(u),
            None => other.push(format!("Error: {}", error.trim())),
        }
    }
    match (found.is_empty(), other.is_empty()) {
        (false, true) => Ok(found),
        (true, true) => Err("the plan failed with no error".into()),
        (_, false) => Err(other.join(" ")),
    }
}

/// The object one error refuses, when the error is the refusal of an
/// object nothing but a record proves and names its remedy.
fn refused(error: &str) -> Option<Unclaimed> {
    if !error.contains(NO_RECORD) {
        return None;
    }
    let rest = &error[error.find(REMEDY)? + REMEDY.len()..];
    let (address, rest) = rest.split_once(", id = \"")?;
    let (id, _) = rest.split_once("\")")?;
    // The remedy names the very object the error refuses.
    error
        .contains(&format!("{address} would bind to the live object {id},"))
        .then(|| Unclaimed {
            address: address.to_owned(),
            id: id.to_owned(),
        })
}

/// The import blocks the remedies give, as a person would write them.
pub(crate) fn import_blocks(list: &[Unclaimed]) -> String {
    list.iter()
        .map(|u| {
            format!(
                "import {{\n  to = {}\n  id = \"{}\"\n}}\n",
                u.address,
                hcl_escaped(&u.id)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` as the inside of an HCL quoted string.
fn hcl_escaped(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace("${", "$${")
        .replace("%{", "%%{")
}

/// `a.b (id), ...` for the page.
pub(crate) fn describe(list: &[Unclaimed]) -> String {
    list.iter()
        .map(|u| format!("{} ({})", u.address, u.id))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes the import blocks into the root in `dir`; its [`Written`] takes
/// them out again when dropped.
pub(crate) fn write(dir: &Path, list: &[Unclaimed]) -> Result<Written, StepError> {
    let path = dir.join(FILE);
    if path.exists() {
        return Err(StepError::Knob(format!(
            "{} exists already: the root may not hold a file of that name",
            path.display()
        )));
    }
    fs::write(&path, import_blocks(list)).map_err(io(&path))?;
    Ok(Written { path })
}

/// The import blocks' file, removed when this is dropped.
pub(crate) struct Written {
    path: PathBuf,
}

impl Drop for Written {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// A plan made (`first`); when it was refused only for objects nothing
/// but a record proves, those objects, and the plan made again by `plan`
/// with the import blocks their remedies give written into `dir` (kept
/// there while the returned [`Written`] lives).
#[allow(clippy::type_complexity)]
pub(crate) fn follow_remedies(
    dir: &Path,
    first: Result<EnginePlan, String>,
    plan: impl FnOnce() -> Result<Result<EnginePlan, String>, EngineError>,
) -> Result<(Result<EnginePlan, String>, Vec<Unclaimed>, Option<Written>), StepError> {
    let Err(output) = &first else {
        return Ok((first, Vec::new(), None));
    };
    let Ok(list) = unclaimed(output) else {
        return Ok((first, Vec::new(), None));
    };
    let written = write(dir, &list)?;
    Ok((plan()?, list, Some(written)))
}

/// The words for the refused objects on a stage's page, ending where the
/// plan made with their import blocks is described; nothing when none was.
pub(crate) fn refused_words(list: &[Unclaimed]) -> String {
    match list.len() {
        0 => String::new(),
        n => format!(
            "it refused the {n} object(s) nothing but a record proves, by address, each with an import block as the remedy ({}); with those import blocks written, ",
            describe(list)
        ),
    }
}

/// Whether a plan made with the remedies' import blocks imports exactly
/// the refused objects: its summary counts them, and it names each. With
/// nothing refused there is nothing to hold it to.
pub(crate) fn imports_exactly(plan: &EnginePlan, list: &[Unclaimed]) -> Result<(), String> {
    if list.is_empty() {
        return Ok(());
    }
    let summary = plan.summary_line();
    let counted = format!("Plan: {} to import,", list.len());
    let missing: Vec<&str> = list
        .iter()
        .filter(|u| !plan.text.contains(&format!("# {} will be ", u.address)))
        .map(|u| u.address.as_str())
        .collect();
    match (summary.starts_with(&counted), missing.is_empty()) {
        (true, true) => Ok(()),
        _ => Err(format!(
            "with the import blocks the refusals' remedies give ({}), the plan ({summary}) does not import exactly them{}",
            describe(list),
            match missing.is_empty() {
                true => String::new(),
                false => format!("; it does not name {}", missing.join(", ")),
            }
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REFUSED: &str = "
Error: Object not owned by this estate

  with aws_iam_group.ops,
  on main.tf line 9:
   9: resource \"aws_iam_group\" \"ops\" {

aws_iam_group.ops would bind to the live object grp-ops, but aws_iam_group
carries no marker and no record of estate \"grp\" names it. It is never adopted
silently. To bring it into the estate, add an import block for it (to =
aws_iam_group.ops, id = \"grp-ops\").
";

    const FOREIGN: &str = "
Error: Object owned by another estate

aws_s3_bucket.b would bind to the live object b, which carries the marker of
estate \"other\". One estate never adopts, writes or destroys another estate's
objects: give this block's object another name, or remove the block.
";

    #[test]
    fn a_refusal_with_its_remedy_gives_the_object_to_import() {
        let list = unclaimed(REFUSED).unwrap();
        assert_eq!(
            list,
            [Unclaimed {
                address: "aws_iam_group.ops".into(),
                id: "grp-ops".into()
            }]
        );
        assert_eq!(
            import_blocks(&list),
            "import {\n  to = aws_iam_group.ops\n  id = \"grp-ops\"\n}\n"
        );
        // Any other error, beside it or alone, is not a refusal to follow.
        let e = unclaimed(&format!("{REFUSED}{FOREIGN}")).unwrap_err();
        assert!(e.contains("Object owned by another estate"), "{e}");
        assert!(unclaimed(FOREIGN).is_err());
        assert!(unclaimed("").is_err());
        // A refusal whose remedy names another object is not followed.
        let crossed = REFUSED.replace("(to =\naws_iam_group.ops", "(to =\naws_iam_group.dev");
        assert!(unclaimed(&crossed).is_err());
        assert_eq!(hcl_escaped("a\"${b}\\"), "a\\\"$${b}\\\\");
    }

    #[test]
    fn the_plan_after_the_remedy_imports_exactly_the_refused_objects() {
        let list = unclaimed(REFUSED).unwrap();
        let imported = EnginePlan::parse(
            2,
            "  # aws_iam_group.ops will be imported\n\nPlan: 1 to import, 0 to add, 0 to change, 0 to destroy.\n",
        );
        assert!(imports_exactly(&imported, &list).is_ok());
        let none = EnginePlan::parse(
            2,
            "  # aws_iam_group.ops will be created\n\nPlan: 0 to add, 1 to change, 0 to destroy.\n",
        );
        assert!(imports_exactly(&none, &list).is_err());
        let two = EnginePlan::parse(
            2,
            "  # aws_iam_group.ops will be imported\n\nPlan: 2 to import, 0 to add, 0 to change, 0 to destroy.\n",
        );
        assert!(imports_exactly(&two, &list).is_err());
    }
}
