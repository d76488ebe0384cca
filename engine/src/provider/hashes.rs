//! Provider package checksums as terraform writes them in the dependency
//! lock file: `h1:` (Go's dirhash "Hash1": the SHA-256 of a sorted list of
//! each file's SHA-256 and relative path, in base64) of an unpacked package
//! directory or of a `.zip` archive's contents, and `zh:` (the SHA-256 of a
//! `.zip` archive itself, in hex).
//!
//! A file's SHA-256 comes through the schema cache's memo when one is given,
//! so a 700 MB binary is read once while it stays unchanged (same device,
//! inode, size, modification and change times). Choosing which hashes to
//! check, and what a mismatch means, belongs to [`super::lockfile`] and
//! [`super::install`].

use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use base64::Engine as _;

use super::cache::{file_sha256, SchemaCache};

/// One checksum of a provider package: `h1:...` or `zh:...`, or a scheme
/// this engine does not know (kept, never matched).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PackageHash(String);

impl PackageHash {
    /// A hash as written in a lock file: `SCHEME:VALUE` with a non-empty
    /// scheme.
    pub fn parse(text: &str) -> Result<PackageHash, String> {
        match text.find(':') {
            Some(i) if i > 0 => Ok(PackageHash(text.into())),
            _ => Err("hash string must start with a scheme keyword followed by a colon".into()),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_h1(&self) -> bool {
        self.0.starts_with("h1:")
    }

    pub fn is_zh(&self) -> bool {
        self.0.starts_with("zh:")
    }
}

impl fmt::Display for PackageHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a package could not be hashed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HashError {
    #[error("could not read {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{} is not a valid zip archive: {reason}", path.display())]
    Zip { path: PathBuf, reason: String },
    #[error("dirhash: file names with newlines are not supported ({name:?})")]
    Newline { name: String },
}

/// The `h1:` hash of an unpacked package directory (symlinks to it, and to
/// files in it, followed).
pub fn h1_dir(dir: &Path, cache: Option<&SchemaCache>) -> Result<PackageHash, HashError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| HashError::Io { path, source }
    };
    let base = fs::canonicalize(dir).map_err(io(dir))?;
    let mut files = Vec::new();
    walk(&base, "", &mut files)?;
    let mut sums = Vec::with_capacity(files.len());
    for name in files {
        let path = base.join(&name);
        let sum = file_sha256(cache, &path).map_err(io(&path))?;
        sums.push((name, sum.as_str().to_string()));
    }
    hash1(sums)
}

/// Lists the files under `dir` as dirhash does (directories descended,
/// everything else a file), relative, with `/` separators.
fn walk(dir: &Path, prefix: &str, files: &mut Vec<String>) -> Result<(), HashError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| HashError::Io { path, source }
    };
    for entry in fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if entry.file_type().map_err(io(&entry.path()))?.is_dir() {
            walk(&entry.path(), &rel, files)?;
        } else {
            files.push(rel);
        }
    }
    Ok(())
}

/// The `h1:` hash of a `.zip` package's contents: equal to the `h1:` of
/// the directory it unpacks to.
pub fn h1_zip(archive: &Path) -> Result<PackageHash, HashError> {
    let zip_error = |reason: String| HashError::Zip {
        path: archive.to_owned(),
        reason,
    };
    let file = fs::File::open(archive).map_err(|source| HashError::Io {
        path: archive.to_owned(),
        source,
    })?;
    let mut zip =
        zip::ZipArchive::new(io::BufReader::new(file)).map_err(|e| zip_error(e.to_string()))?;
    let mut sums = Vec::with_capacity(zip.len());
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| zip_error(e.to_string()))?;
        let name = entry
            .name()
            .map_err(|e| zip_error(e.to_string()))?
            .into_owned();
        let sum = sha256_hex(&mut entry).map_err(|e| zip_error(e.to_string()))?;
        sums.push((name, sum));
    }
    hash1(sums)
}

/// The `zh:` hash of a `.zip` archive: the SHA-256 of its bytes.
pub fn zh(archive: &Path) -> Result<PackageHash, HashError> {
    let mut file = fs::File::open(archive).map_err(|source| HashError::Io {
        path: archive.to_owned(),
        source,
    })?;
    let sum = sha256_hex(&mut file).map_err(|source| HashError::Io {
        path: archive.to_owned(),
        source,
    })?;
    Ok(PackageHash(format!("zh:{sum}")))
}

/// dirhash's Hash1 over (name, hex SHA-256) pairs: the pairs sorted by
/// name, each written `HEX  NAME\n`, the SHA-256 of that in base64.
fn hash1(mut sums: Vec<(String, String)>) -> Result<PackageHash, HashError> {
    sums.sort();
    let mut summary = String::new();
    for (name, sum) in &sums {
        if name.contains('\n') {
            return Err(HashError::Newline { name: name.clone() });
        }
        summary.push_str(&format!("{sum}  {name}\n"));
    }
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, summary.as_bytes());
    Ok(PackageHash(format!(
        "h1:{}",
        base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
    )))
}

fn sha256_hex(reader: &mut dyn Read) -> io::Result<String> {
    let mut context = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        context.update(&buffer[..n]);
    }
    Ok(context
        .finish()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A package directory and the same files zipped.
    fn package(dir: &Path) -> PathBuf {
        let pkg = dir.join("pkg");
        fs::create_dir_all(pkg.join("sub")).unwrap();
        fs::write(pkg.join("terraform-provider-x_v1.0.0"), b"#!/bin/sh\n").unwrap();
        fs::write(pkg.join("LICENSE.txt"), b"licence\n").unwrap();
        fs::write(pkg.join("sub/data"), b"").unwrap();
        let archive = dir.join("pkg.zip");
        let mut zip = zip::ZipWriter::new(fs::File::create(&archive).unwrap());
        for (name, body) in [
            ("terraform-provider-x_v1.0.0", &b"#!/bin/sh\n"[..]),
            ("sub/data", b""),
            ("LICENSE.txt", b"licence\n"),
        ] {
            zip.start_file(name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(body).unwrap();
        }
        zip.finish().unwrap();
        archive
    }

    #[test]
    fn h1_is_dirhash_hash1_and_equal_for_a_directory_and_its_zip() {
        let tmp = tempfile::tempdir().unwrap();
        let archive = package(tmp.path());
        // dirhash's summary, computed by hand: lines sorted by name.
        let sha = |b: &[u8]| {
            aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, b)
                .as_ref()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        let summary = format!(
            "{}  LICENSE.txt\n{}  sub/data\n{}  terraform-provider-x_v1.0.0\n",
            sha(b"licence\n"),
            sha(b""),
            sha(b"#!/bin/sh\n")
        );
        let want = format!(
            "h1:{}",
            base64::engine::general_purpose::STANDARD.encode(
                aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, summary.as_bytes()).as_ref()
            )
        );
        let cache = SchemaCache::new(tmp.path().join("cache"));
        assert_eq!(
            h1_dir(&tmp.path().join("pkg"), None).unwrap().as_str(),
            want
        );
        assert_eq!(
            h1_dir(&tmp.path().join("pkg"), Some(&cache))
                .unwrap()
                .as_str(),
            want
        );
        assert_eq!(h1_zip(&archive).unwrap().as_str(), want);
        let zh = zh(&archive).unwrap();
        assert_eq!(
            zh.as_str(),
            format!("zh:{}", sha(&fs::read(&archive).unwrap()))
        );
    }

    #[test]
    fn one_changed_byte_changes_h1_even_with_the_memo() {
        let tmp = tempfile::tempdir().unwrap();
        package(tmp.path());
        let cache = SchemaCache::new(tmp.path().join("cache"));
        let pkg = tmp.path().join("pkg");
        let before = h1_dir(&pkg, Some(&cache)).unwrap();
        fs::write(pkg.join("terraform-provider-x_v1.0.0"), b"#!/bin/sh\r").unwrap();
        assert_ne!(h1_dir(&pkg, Some(&cache)).unwrap(), before);
    }

    #[test]
    fn parses_hash_strings() {
        assert!(PackageHash::parse("h1:abc").unwrap().is_h1());
        assert!(PackageHash::parse("zh:00").unwrap().is_zh());
        assert!(PackageHash::parse("xx:00").is_ok());
        assert!(PackageHash::parse(":00").is_err());
        assert!(PackageHash::parse("abc").is_err());
    }
}
