//! The moves the stages share, so that each stage reads as what it does
//! and asserts:
//!
//! - **side by side**: the same move on both twins at once ([`Lane::both`],
//!   [`write_both`], [`edit_root`]), or the engine on the estate twin
//!   beside stock terraform on the oracle twin ([`both_plans`],
//!   [`both_apply`], [`side_by_side`]);
//! - **verdicts**: an assertion from what was seen, `Ok` with the words for
//!   a pass or `Err` with those for a failure ([`verdict`]), and the
//!   comparison most stages make, the engine's plan against stock's and
//!   the change expected ([`same_as_stock`]);
//! - **BREAK toggles**: a toggle's tamper with its restore ([`Lane::tamper`]),
//!   so that the read it falsifies is the only thing that sees it and the
//!   stages after it start where a clean run would.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::thread;

use crate::choudoufu::{Action, Applied, EnginePlan};
use crate::estate::Knobs;
use crate::oracle::Plan;
use crate::process;
use crate::stage::{Assertion, Breaks, Toggle};
use crate::substrate::both_sides;
use crate::witness::{Handle, Inventory, Kind, Witness};

use super::{Lane, StepError, TwinView};

/// The marker tags the engine writes: the estate that owns an object, and
/// the address of the block that made it.
pub(super) const ESTATE_KEY: &str = "tofu-estate";
pub(super) const ADDRESS_KEY: &str = "tofu-address";
/// The tag a toggle or Drift sets out of band where no manifest names a
/// parameter to change: no configuration names it.
pub(super) const DRIFT_TAG: &str = "gauntlet-drift";

// Side by side.

impl Lane<'_> {
    /// Run `f` on both twins side by side.
    pub(crate) fn both<T: Send>(&self, f: impl Fn(&TwinView) -> T + Sync) -> [T; 2] {
        let (a, b) = both_sides(|side| f(&self.twins[side as usize]));
        [a, b]
    }
}

/// Both twins' results, or the first error.
pub(crate) fn both_ok<T>(r: [Result<T, StepError>; 2]) -> Result<[T; 2], StepError> {
    let [a, b] = r;
    Ok([a?, b?])
}

/// Run `a` and `b` side by side.
pub(super) fn side_by_side<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    thread::scope(|s| {
        let hb = s.spawn(b);
        let ra = a();
        (
            ra,
            hb.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
        )
    })
}

/// The engine's plan on the estate twin beside stock's on the oracle twin.
pub(super) fn both_plans(lane: &Lane, name: &str) -> Result<(EnginePlan, Plan), StepError> {
    let o = lane.oracle_twin();
    let (ep, sp) = side_by_side(
        || lane.engine.plan(lane.clock, &[]),
        || o.oracle.plan(lane.clock, name, &[]),
    );
    Ok((ep?, sp?))
}

/// The engine's apply beside stock's apply of its plan file.
pub(super) fn both_apply(lane: &Lane, name: &str) -> Result<Applied, StepError> {
    let o = lane.oracle_twin();
    let (ea, sa) = side_by_side(
        || lane.engine.apply(lane.clock, false),
        || o.oracle.apply(lane.clock, name),
    );
    sa?;
    Ok(ea?.0)
}

/// Write `text` as `file` in both twins' roots.
pub(super) fn write_both(lane: &Lane, file: &str, text: &str) -> Result<(), StepError> {
    both_ok(lane.both(|t: &TwinView| {
        let path = t.oracle.dir.join(file);
        fs::write(&path, text).map_err(io(&path))
    }))
    .map(drop)
}

/// Take `file` out of both twins' roots again.
pub(super) fn remove_both(lane: &Lane, file: &str) -> Result<(), StepError> {
    both_ok(lane.both(|t: &TwinView| {
        let path = t.oracle.dir.join(file);
        fs::remove_file(&path).map_err(io(&path))
    }))
    .map(drop)
}

/// Each `.tf` file of a twin's working copy, edited by `f` where it applies;
/// false when no file held what `f` looks for.
pub(super) fn edit_root(dir: &Path, f: impl Fn(&str) -> Option<String>) -> Result<bool, StepError> {
    Ok(!edit_root_saving(dir, f)?.is_empty())
}

/// [`edit_root`], returning each changed file as it was, for [`put_back`].
pub(super) fn edit_root_saving(
    dir: &Path,
    f: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(PathBuf, String)>, StepError> {
    let mut saved = Vec::new();
    let mut files: Vec<_> = fs::read_dir(dir)
        .map_err(io(dir))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "tf"))
        .collect();
    files.sort();
    for p in files {
        let text = fs::read_to_string(&p).map_err(io(&p))?;
        if let Some(new) = f(&text) {
            fs::write(&p, new).map_err(io(&p))?;
            saved.push((p, text));
        }
    }
    Ok(saved)
}

/// Files written back as [`edit_root_saving`] found them.
pub(super) fn put_back(saved: Vec<(PathBuf, String)>) -> Result<(), StepError> {
    for (p, text) in saved {
        fs::write(&p, text).map_err(io(&p))?;
    }
    Ok(())
}

/// A file operation's error, naming the file.
pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StepError + '_ {
    move |source| StepError::Io {
        path: path.to_owned(),
        source,
    }
}

// Verdicts.

/// The assertion of `toggle`: it holds when `r` is `Ok`, and the page
/// shows the words either way.
pub(super) fn verdict(toggle: Toggle, r: Result<String, String>) -> Assertion {
    match r {
        Ok(s) => Assertion::new(toggle, true, s),
        Err(s) => Assertion::new(toggle, false, s),
    }
}

/// Whether the engine's plan proposes exactly `want` and stock's the same.
pub(super) fn same_as_stock(
    engine: &EnginePlan,
    stock: &Plan,
    want: &[(String, Action)],
) -> Result<String, String> {
    let e = sorted(engine.changes.clone());
    let s = sorted(stock.actions());
    let want = sorted(want.to_vec());
    let mut problems = Vec::new();
    if e != want {
        problems.push(format!(
            "choudoufu proposed {} ({}) where {} was expected",
            describe(&e),
            engine.summary_line(),
            describe(&want)
        ));
    }
    if s != want {
        problems.push(format!(
            "stock proposed {} ({}) where {} was expected",
            describe(&s),
            stock.summary_line(),
            describe(&want)
        ));
    }
    if problems.is_empty() {
        Ok(format!(
            "choudoufu proposed exactly {} ({}), the same address and action as stock's own plan on the oracle twin ({})",
            describe(&e),
            engine.summary_line(),
            stock.summary_line()
        ))
    } else {
        Err(problems.join("; "))
    }
}

/// `a (update), b (delete)`: changes for the page.
pub(super) fn describe(changes: &[(String, Action)]) -> String {
    if changes.is_empty() {
        return "no resource changes".into();
    }
    changes
        .iter()
        .map(|(a, x)| format!("{a} ({})", x.word()))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn sorted(mut v: Vec<(String, Action)>) -> Vec<(String, Action)> {
    v.sort();
    v
}

// BREAK toggles.

/// A BREAK toggle's tamper, done, with what undoes it. [`Tamper::restore`]
/// undoes it once the read it falsifies is done; dropped unrestored (a
/// step failed in between), it is undone as well as it can be, unless the
/// run was interrupted.
#[must_use = "a tamper is restored once the read it falsifies is done"]
pub(super) struct Tamper<'l> {
    undo: Option<Box<dyn FnOnce() -> Result<(), StepError> + 'l>>,
}

impl Lane<'_> {
    /// Under `toggle`, `tamper` now and `restore` with what it returned
    /// when the tamper is restored; with the toggle off, nothing.
    pub(super) fn tamper<'l, T: 'l>(
        &self,
        toggle: Toggle,
        tamper: impl FnOnce() -> Result<T, StepError>,
        restore: impl FnOnce(T) -> Result<(), StepError> + 'l,
    ) -> Result<Tamper<'l>, StepError> {
        Tamper::under(self.breaks, toggle, tamper, restore)
    }
}

impl<'l> Tamper<'l> {
    /// [`Lane::tamper`] under `breaks`.
    fn under<T: 'l>(
        breaks: &Breaks,
        toggle: Toggle,
        tamper: impl FnOnce() -> Result<T, StepError>,
        restore: impl FnOnce(T) -> Result<(), StepError> + 'l,
    ) -> Result<Tamper<'l>, StepError> {
        if !breaks.on(toggle) {
            return Ok(Tamper { undo: None });
        }
        let held = tamper()?;
        Ok(Tamper {
            undo: Some(Box::new(move || restore(held))),
        })
    }

    /// Keep the tamper: what comes after it puts the object back.
    pub(super) fn keep(mut self) {
        self.undo = None;
    }

    /// Undo the tamper, if there was one.
    pub(super) fn restore(mut self) -> Result<(), StepError> {
        match self.undo.take() {
            Some(undo) => undo(),
            None => Ok(()),
        }
    }
}

impl Drop for Tamper<'_> {
    fn drop(&mut self) {
        // An interrupted run stops at once; otherwise the step's own error
        // is the one to report.
        if let Some(undo) = self.undo.take().filter(|_| !process::interrupted()) {
            let _ = undo();
        }
    }
}

/// Under `toggle`, the estate twin's parameter `name` overwritten with a
/// tampered value, put back to what it held on restore.
pub(super) fn overwrite<'l>(
    lane: &'l Lane,
    toggle: Toggle,
    name: &'l str,
    what: &str,
) -> Result<Tamper<'l>, StepError> {
    let w = &lane.estate_twin().witness;
    lane.tamper(
        toggle,
        || {
            let old = w.parameter_value(name)?;
            w.overwrite_parameter(name, &tampered(what))?;
            Ok(old)
        },
        move |old| match old {
            Some(old) => Ok(w.overwrite_parameter(name, &old)?),
            None => Ok(()),
        },
    )
}

/// Under `toggle`, the estate twin's parameter `name` deleted, put back
/// as it was on restore.
pub(super) fn take_away<'l>(
    lane: &'l Lane,
    toggle: Toggle,
    name: &'l str,
) -> Result<Tamper<'l>, StepError> {
    let w = &lane.estate_twin().witness;
    lane.tamper(
        toggle,
        || take_parameter(w, name),
        move |saved| put_back_parameter(w, name, &saved),
    )
}

/// Under `toggle`, the parameter `name` created again on the estate twin
/// holding `value` and carrying the estate's markers for `address`, as a
/// replacement that left its old object behind would; deleted on restore.
pub(super) fn resurrect<'l>(
    lane: &'l Lane,
    toggle: Toggle,
    name: &'l str,
    value: &'l str,
    address: &'l str,
) -> Result<Tamper<'l>, StepError> {
    let w = &lane.estate_twin().witness;
    lane.tamper(
        toggle,
        || {
            let markers = [
                (ESTATE_KEY.to_owned(), lane.estate.name.clone()),
                (ADDRESS_KEY.to_owned(), address.to_owned()),
            ];
            Ok(w.put_parameter_tagged(name, value, &markers)?)
        },
        move |()| Ok(w.delete_parameter(name)?),
    )
}

/// Why an apply the engine's SIGTERM hook stopped does not read as one:
/// it must exit 1 saying "Operation interrupted". `what` names the apply.
pub(super) fn not_interrupted(out: &crate::choudoufu::Output, what: &str) -> Option<String> {
    let said = format!("{}{}", out.stdout, out.stderr);
    (out.code != 1 || !said.contains("Operation interrupted")).then(|| {
        format!(
            "{what} exited {} without saying it was interrupted: {}",
            out.code,
            said.trim().lines().last().unwrap_or("")
        )
    })
}

/// The estate twin's objects by ARN carrying this estate's markers now, as
/// (address, ARN) in address order: what a toggle tampers with where no
/// manifest names an object.
pub(crate) fn marked_objects(lane: &Lane) -> Result<Vec<(String, String)>, StepError> {
    let e = lane.estate_twin();
    marked_in(lane, &e.witness.inventory(&lane.kinds)?)
}

/// [`marked_objects`] among the objects of an inventory already read.
pub(crate) fn marked_in(lane: &Lane, live: &Inventory) -> Result<Vec<(String, String)>, StepError> {
    let e = lane.estate_twin();
    let hits = e.witness.markers(live)?;
    let by_arn = |key: &'static str| {
        hits.iter()
            .filter(move |h| h.key == key)
            .filter_map(|h| match &h.at {
                Some((Kind::Tagged, arn)) => Some((arn.clone(), h.value.clone())),
                _ => None,
            })
    };
    let own: BTreeSet<String> = by_arn(ESTATE_KEY)
        .filter(|(_, estate)| *estate == lane.estate.name)
        .map(|(arn, _)| arn)
        .collect();
    let mut out: Vec<(String, String)> = by_arn(ADDRESS_KEY)
        .filter(|(arn, _)| own.contains(arn))
        .map(|(arn, address)| (address, arn))
        .collect();
    out.sort();
    Ok(out)
}

impl Lane<'_> {
    /// The object a toggle tampers with by its tags: the manifest's, or
    /// where it names none the first object by ARN carrying this estate's
    /// markers that is not `skip`. Called only by a tamper, which runs only
    /// when its toggle is on.
    pub(crate) fn target(
        &self,
        manifest: impl FnOnce(&Knobs) -> Option<Handle>,
        skip: Option<&str>,
    ) -> Result<Handle, StepError> {
        match manifest(&self.estate.knobs) {
            Some(h) => Ok(h),
            None => marked_object(self, skip),
        }
    }
}

/// The first object by ARN carrying this estate's markers that is not
/// `skip`.
fn marked_object(lane: &Lane, skip: Option<&str>) -> Result<Handle, StepError> {
    marked_objects(lane)?
        .into_iter()
        .find(|(_, arn)| Some(arn.as_str()) != skip)
        .map(|(_, arn)| Handle::Object(arn))
        .ok_or_else(|| {
            StepError::NotDerived(
                "no object by ARN carries this estate's markers, so none can be tampered with"
                    .into(),
            )
        })
}

/// Under `toggle`, the tag `key` set to `during` (taken off with `None`)
/// on the estate twin's object `target` picks, and set to `after` on
/// restore.
pub(super) fn retag<'l>(
    lane: &'l Lane,
    toggle: Toggle,
    target: impl FnOnce() -> Result<Handle, StepError>,
    key: &'l str,
    during: Option<String>,
    after: Option<String>,
) -> Result<Tamper<'l>, StepError> {
    let w = &lane.estate_twin().witness;
    lane.tamper(
        toggle,
        || {
            let h = target()?;
            h.set_tag(w, key, during.as_deref())?;
            Ok(h)
        },
        move |h| Ok(h.set_tag(w, key, after.as_deref())?),
    )
}

/// Under `toggle`, the estate marker taken off the manifest's stamped
/// queue, or an object by ARN carrying it, and put back on restore.
pub(super) fn unstamp<'l>(lane: &'l Lane, toggle: Toggle) -> Result<Tamper<'l>, StepError> {
    retag(
        lane,
        toggle,
        || lane.target(|k| k.stamped_queue.clone().map(Handle::Queue), None),
        ESTATE_KEY,
        None,
        Some(lane.estate.name.clone()),
    )
}

/// Under `toggle`, one object of the estate twin changed out of band and
/// put back on restore: the manifest's parameter (`param`) overwritten, or
/// where there is none an object by ARN carrying this estate's markers
/// (not `skip`) given a tag no configuration names.
pub(super) fn disturb<'l>(
    lane: &'l Lane,
    toggle: Toggle,
    param: impl FnOnce(&'l Knobs) -> &'l Option<String>,
    what: &str,
    skip: Option<&str>,
) -> Result<Tamper<'l>, StepError> {
    match param(&lane.estate.knobs) {
        Some(name) => overwrite(lane, toggle, name, what),
        None => retag(
            lane,
            toggle,
            || marked_object(lane, skip),
            DRIFT_TAG,
            Some(tampered(what)),
            None,
        ),
    }
}

/// A value no configuration holds, naming the move that wrote it.
pub(super) fn tampered(what: &str) -> String {
    format!("tampered-{what}")
}

/// A parameter's value and tags, as a BREAK toggle takes it away.
pub(super) struct Saved {
    pub(super) value: String,
    pub(super) tags: Vec<(String, String)>,
}

/// Delete a parameter, keeping what puts it back as it was.
pub(super) fn take_parameter(w: &Witness, name: &str) -> Result<Saved, StepError> {
    let saved = Saved {
        value: w.parameter_value(name)?.unwrap_or_default(),
        tags: w.parameter_tags(name)?,
    };
    w.delete_parameter(name)?;
    Ok(saved)
}

/// Put a parameter taken by [`take_parameter`] back as it was.
pub(super) fn put_back_parameter(w: &Witness, name: &str, saved: &Saved) -> Result<(), StepError> {
    Ok(w.put_parameter_tagged(name, &saved.value, &saved.tags)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A tamper of `toggle` under `breaks` that logs what it does.
    fn logged<'l>(
        breaks: &Breaks,
        log: &'l RefCell<Vec<&'static str>>,
    ) -> Result<Tamper<'l>, StepError> {
        Tamper::under(
            breaks,
            Toggle::NoopMarkers,
            || {
                log.borrow_mut().push("tamper");
                Ok(())
            },
            move |()| {
                log.borrow_mut().push("restore");
                Ok(())
            },
        )
    }

    #[test]
    fn a_tamper_is_done_and_undone_only_under_its_toggle() {
        let log = RefCell::new(Vec::new());
        for on in [&[Toggle::NoopMarkers][..], &[Toggle::NoopChanges]] {
            let t = logged(&Breaks::new(on, |_| None), &log).unwrap();
            log.borrow_mut().push("read");
            t.restore().unwrap();
        }
        assert_eq!(*log.borrow(), ["tamper", "read", "restore", "read"]);
    }

    #[test]
    fn a_tamper_dropped_by_a_failed_step_is_still_undone() {
        let log = RefCell::new(Vec::new());
        let breaks = Breaks::new(&[Toggle::NoopMarkers], |_| None);
        let step = || -> Result<(), StepError> {
            let _tamper = logged(&breaks, &log)?;
            Err(StepError::Knob("the read failed".into()))
        };
        assert!(step().is_err());
        assert_eq!(*log.borrow(), ["tamper", "restore"]);
    }
}
