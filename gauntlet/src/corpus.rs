//! Corpus estates' roots: a public repository's folder at a pinned commit.
//!
//! Nothing of the repository is committed here: its tree at the commit is
//! written into a cache folder, from a local clone (`--source-dir`, bare or
//! not) or, where the network allows, by fetching that one commit. git
//! itself checks the commit: an archive of a commit the clone lacks fails.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

/// `[source]` of a corpus estate's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Where the repository is cloned from.
    pub git: String,
    /// The commit, 40 hex digits.
    pub rev: String,
    /// The root's folder within the repository.
    pub path: String,
    /// The tag that names the commit, for the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// Why a corpus estate's root could not be brought.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("source.rev = {0:?} must be a full commit: 40 hex digits")]
    Rev(String),
    #[error("source.path = {0:?} must be a folder inside the repository, such as examples/simple")]
    Path(String),
    #[error("{what} failed: {output}")]
    Git { what: String, output: String },
    #[error("{git} at {rev} has no folder {path}")]
    NoFolder {
        git: String,
        rev: String,
        path: String,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CorpusError + '_ {
    move |source| CorpusError::Io {
        path: path.to_owned(),
        source,
    }
}

impl Source {
    /// The manifest's fields checked: a full commit, a relative folder.
    pub fn check(&self) -> Result<(), CorpusError> {
        if self.rev.len() != 40 || !self.rev.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(CorpusError::Rev(self.rev.clone()));
        }
        let p = Path::new(&self.path);
        if self.path.is_empty()
            || p.is_absolute()
            || p.components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(CorpusError::Path(self.path.clone()));
        }
        Ok(())
    }

    /// The repository, commit and folder, as the page names them.
    pub fn describe(&self) -> String {
        let tag = self
            .tag
            .as_ref()
            .map(|t| format!(" (tag {t})"))
            .unwrap_or_default();
        format!(
            "{}, commit {}{tag}, folder {}",
            self.git, self.rev, self.path
        )
    }
}

/// Where corpus roots come from: a local clone, and the cache folder
/// their trees are written into.
#[derive(Debug, Clone)]
pub struct Checkouts {
    /// A local clone of the repository holding the commit.
    pub source_dir: Option<PathBuf>,
    /// Trees by commit: `<cache>/<rev>/`.
    pub cache: PathBuf,
}

/// `git` with `args`, its stdout; an error names `what` and says what git
/// said.
fn git(args: &[&str], what: &str) -> Result<Vec<u8>, CorpusError> {
    let out = Command::new("git")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| CorpusError::Git {
            what: what.to_owned(),
            output: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(CorpusError::Git {
            what: what.to_owned(),
            output: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(out.stdout)
}

/// The root's folder of `source`: its tree at the commit in the cache,
/// written there first when it is not yet.
pub fn checkout(source: &Source, at: &Checkouts) -> Result<PathBuf, CorpusError> {
    source.check()?;
    let tree = at.cache.join(&source.rev);
    let done = tree.join(".gauntlet-source");
    if fs::read_to_string(&done).ok().as_deref() != Some(source.rev.as_str()) {
        fs::create_dir_all(&at.cache).map_err(io(&at.cache))?;
        let repo = match &at.source_dir {
            Some(d) => d.clone(),
            None => fetch(source, &at.cache)?,
        };
        let repo_arg = repo.display().to_string();
        let tar = git(
            &["-C", &repo_arg, "archive", "--format=tar", &source.rev],
            &format!("git archive of {} in {}", source.rev, repo.display()),
        )?;
        // Written beside, then moved in whole: a run stopped midway
        // leaves no half tree the next run would take, and runs started
        // side by side (estates of one repository) each write their own
        // and keep whichever lands first.
        let partial = tempfile::Builder::new()
            .prefix(&format!("{}.partial-", source.rev))
            .tempdir_in(&at.cache)
            .map_err(io(&at.cache))?
            .keep();
        untar(&tar, &partial)?;
        fs::write(partial.join(".gauntlet-source"), &source.rev).map_err(io(&partial))?;
        if tree.exists() && fs::read_to_string(&done).ok().as_deref() != Some(source.rev.as_str()) {
            fs::remove_dir_all(&tree).map_err(io(&tree))?;
        }
        if fs::rename(&partial, &tree).is_err() {
            // Another run's tree landed first; its tree is this one.
            fs::remove_dir_all(&partial).map_err(io(&partial))?;
            if fs::read_to_string(&done).ok().as_deref() != Some(source.rev.as_str()) {
                return Err(CorpusError::Io {
                    path: tree.clone(),
                    source: std::io::Error::other("could not put the tree in place"),
                });
            }
        }
    }
    let root = tree.join(&source.path);
    if !root.is_dir() {
        return Err(CorpusError::NoFolder {
            git: source.git.clone(),
            rev: source.rev.clone(),
            path: source.path.clone(),
        });
    }
    Ok(root)
}

/// A bare repository in the cache holding the one commit, fetched from
/// `source.git`.
fn fetch(source: &Source, cache: &Path) -> Result<PathBuf, CorpusError> {
    let repo = cache.join(format!("{}.git", source.rev));
    let r = repo.display().to_string();
    if !repo.join("HEAD").is_file() {
        git(&["init", "--quiet", "--bare", &r], "git init")?;
    }
    git(
        &[
            "-C",
            &r,
            "fetch",
            "--quiet",
            "--depth=1",
            &source.git,
            &source.rev,
        ],
        &format!(
            "fetching {} from {} (pass --source-dir with a local clone where the network does not reach it)",
            source.rev, source.git
        ),
    )?;
    Ok(repo)
}

/// Unpack the tar archive `bytes` into `into` with the system's tar.
fn untar(bytes: &[u8], into: &Path) -> Result<(), CorpusError> {
    let mut child = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(into)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io(into))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(bytes).map_err(io(into))?;
    }
    let out = child.wait_with_output().map_err(io(into))?;
    if !out.status.success() {
        return Err(CorpusError::Git {
            what: format!("tar -x into {}", into.display()),
            output: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(())
}

/// A repository with an example root at its first commit, changed in its
/// second; the first commit's hash. For tests of what takes a corpus root.
#[cfg(test)]
pub(crate) fn test_repo(dir: &Path, example: &str, first: &str, second: &str) -> String {
    let run = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    fs::create_dir_all(dir.join(example)).unwrap();
    run(&["init", "--quiet"]);
    fs::write(dir.join(example).join("main.tf"), first).unwrap();
    fs::write(dir.join("main.tf"), "# module\n").unwrap();
    run(&["add", "."]);
    run(&["commit", "--quiet", "-m", "first"]);
    let hash = run(&["rev-parse", "HEAD"]);
    fs::write(dir.join(example).join("main.tf"), second).unwrap();
    run(&["commit", "--quiet", "-am", "second"]);
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_commit_is_brought_from_a_local_clone_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let clone = d.path().join("clone");
        let first = test_repo(&clone, "examples/simple", "# first\n", "# second\n");
        let source = Source {
            git: "https://example.com/r".into(),
            rev: first.clone(),
            path: "examples/simple".into(),
            tag: None,
        };
        let at = Checkouts {
            source_dir: Some(clone.clone()),
            cache: d.path().join("cache"),
        };
        let root = checkout(&source, &at).unwrap();
        assert_eq!(
            root,
            d.path().join("cache").join(&first).join("examples/simple")
        );
        // The commit's tree, not the clone's newer work.
        assert_eq!(
            fs::read_to_string(root.join("main.tf")).unwrap(),
            "# first\n"
        );
        assert!(
            root.join("../../main.tf").is_file(),
            "the whole tree, for ../../ sources"
        );
        // Kept: a second run needs no clone.
        fs::remove_dir_all(&clone).unwrap();
        assert_eq!(checkout(&source, &at).unwrap(), root);

        let missing = Source {
            rev: "0".repeat(40),
            ..source.clone()
        };
        let e = checkout(
            &missing,
            &Checkouts {
                source_dir: Some(d.path().join("nowhere")),
                cache: d.path().join("cache"),
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("git archive of 0000"), "{e}");
        let folder = Source {
            path: "examples/none".into(),
            ..source.clone()
        };
        assert!(matches!(
            checkout(&folder, &at),
            Err(CorpusError::NoFolder { .. })
        ));
    }

    #[test]
    fn runs_side_by_side_share_one_tree() {
        let d = tempfile::tempdir().unwrap();
        let clone = d.path().join("clone");
        let rev = test_repo(&clone, "examples/a", "# a\n", "# b\n");
        let source = Source {
            git: "https://example.com/r".into(),
            rev,
            path: "examples/a".into(),
            tag: None,
        };
        let at = Checkouts {
            source_dir: Some(clone),
            cache: d.path().join("cache"),
        };
        let roots: Vec<PathBuf> = std::thread::scope(|s| {
            let runs: Vec<_> = (0..4).map(|_| s.spawn(|| checkout(&source, &at))).collect();
            runs.into_iter()
                .map(|r| r.join().unwrap().unwrap())
                .collect()
        });
        assert!(roots
            .iter()
            .all(|r| *r == roots[0] && r.join("main.tf").is_file()));
        let left: Vec<_> = fs::read_dir(d.path().join("cache"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    #[test]
    fn a_source_names_a_full_commit_and_a_folder_inside() {
        let ok = Source {
            git: "g".into(),
            rev: "a".repeat(40),
            path: "examples/http".into(),
            tag: Some("v1".into()),
        };
        assert!(ok.check().is_ok());
        assert!(ok.describe().ends_with("(tag v1), folder examples/http"));
        for (rev, path) in [
            ("v5.21.0", "x"),
            (&*"a".repeat(40), "../x"),
            (&*"a".repeat(40), "/x"),
            (&*"a".repeat(40), ""),
        ] {
            let s = Source {
                rev: rev.into(),
                path: path.into(),
                ..ok.clone()
            };
            assert!(s.check().is_err(), "{rev} {path}");
        }
    }
}
