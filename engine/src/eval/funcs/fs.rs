//! Filesystem functions: reading files, hashing them, globbing and path
//! manipulation. `templatefile` reads its file here and renders it in
//! `template`.
//!
//! Paths are taken relative to the process's current directory, as
//! `terraform console` takes them relative to its working directory, and
//! are cleaned lexically the way Go's `path/filepath` cleans them, so error
//! messages name the same path terraform names. A leading `~/` is the home
//! directory (`$HOME`). Errors quote paths unless they are sensitive.

use super::{arg_error, Func, FuncResult, Param};
use crate::value::{go_quote, Type, Value};
use base64::Engine;
use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};
use std::io::Read;

/// The functions that read files, which a `templatestring` template may not
/// call.
pub(crate) const READS_FILES: &[&str] = &[
    "file",
    "fileexists",
    "fileset",
    "filebase64",
    "filebase64sha256",
    "filebase64sha512",
    "filemd5",
    "filesha1",
    "filesha256",
    "filesha512",
    "templatefile",
];

pub(super) fn lookup(name: &str) -> Option<Func> {
    let path = || Param::new("path", Type::String).marked();
    let hash = |imp| Func::new(vec![path()], Type::String, imp);
    Some(match name {
        "file" => Func::new(vec![path()], Type::String, file),
        "filebase64" => Func::new(vec![path()], Type::String, filebase64),
        "fileexists" => Func::new(vec![path()], Type::Bool, fileexists),
        "fileset" => Func::new(
            vec![path(), Param::new("pattern", Type::String).marked()],
            Type::set(Type::String),
            fileset,
        ),
        "filemd5" => hash(|a| file_hash(&a[0], |b| hex(&Md5::digest(b)))),
        "filesha1" => hash(|a| file_hash(&a[0], |b| hex(&Sha1::digest(b)))),
        "filesha256" => hash(|a| file_hash(&a[0], |b| hex(&Sha256::digest(b)))),
        "filesha512" => hash(|a| file_hash(&a[0], |b| hex(&Sha512::digest(b)))),
        "filebase64sha256" => hash(|a| file_hash(&a[0], |b| b64(&Sha256::digest(b)))),
        "filebase64sha512" => hash(|a| file_hash(&a[0], |b| b64(&Sha512::digest(b)))),
        "abspath" => Func::new(vec![path()], Type::String, abspath),
        "dirname" => Func::new(vec![path()], Type::String, |a| {
            Ok(Value::string(go_dir(str_of(&a[0]))).with_sensitive(a[0].sensitive))
        }),
        "basename" => Func::new(vec![path()], Type::String, |a| {
            Ok(Value::string(go_base(str_of(&a[0]))).with_sensitive(a[0].sensitive))
        }),
        "pathexpand" => Func::new(vec![path()], Type::String, |a| {
            Ok(Value::string(expand_home(str_of(&a[0]))?).with_sensitive(a[0].sensitive))
        }),
        _ => return None,
    })
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A path as errors show it: quoted, or hidden when sensitive.
fn shown(path: &str, sensitive: bool) -> String {
    if sensitive {
        "(sensitive value)".to_string()
    } else {
        go_quote(path)
    }
}

/// An I/O error as Go's `*PathError` prints it: `open x: no such file or
/// directory`.
fn go_io_error(op: &str, path: &str, e: &std::io::Error) -> String {
    let text = match e.raw_os_error() {
        Some(code) => {
            let desc = nix::errno::Errno::from_raw(code).desc();
            let mut c = desc.chars();
            match c.next() {
                Some(f) => f.to_lowercase().chain(c).collect(),
                None => String::new(),
            }
        }
        None => e.to_string(),
    };
    format!("{op} {path}: {text}")
}

/// go-homedir's `Expand`: `~` and `~/...` are the home directory.
fn expand_home(path: &str) -> Result<String, String> {
    let Some(rest) = path.strip_prefix('~') else {
        return Ok(path.to_string());
    };
    if !rest.is_empty() && !rest.starts_with('/') && !rest.starts_with('\\') {
        return Err("cannot expand user-specific home dir".to_string());
    }
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() => Ok(go_join(&home, rest)),
        _ => Err("blank output when reading home directory".to_string()),
    }
}

/// The path a file function opens: home expanded, relative to the current
/// directory, cleaned.
fn resolve(path: &str) -> Result<String, String> {
    let p = expand_home(path).map_err(|e| format!("failed to expand ~: {e}"))?;
    Ok(if p.starts_with('/') {
        go_clean(&p)
    } else {
        go_join(".", &p)
    })
}

/// Go's `filepath.Clean`: the shortest lexically equivalent path.
pub(crate) fn go_clean(path: &str) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let rooted = path.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match out.last() {
                Some(&l) if l != ".." => {
                    out.pop();
                }
                _ if rooted => {}
                _ => out.push(".."),
            },
            p => out.push(p),
        }
    }
    let joined = out.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// Go's `filepath.Join` of two elements: empty elements are ignored and the
/// result is cleaned.
fn go_join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => String::new(),
        (true, false) => go_clean(b),
        (false, true) => go_clean(a),
        (false, false) => go_clean(&format!("{a}/{b}")),
    }
}

/// Go's `filepath.Dir`.
fn go_dir(path: &str) -> String {
    match path.rfind('/') {
        Some(i) => go_clean(&path[..=i]),
        None => ".".to_string(),
    }
}

/// Go's `filepath.Base`.
fn go_base(path: &str) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".to_string();
    }
    match trimmed.rfind('/') {
        Some(i) => trimmed[i + 1..].to_string(),
        None => trimmed.to_string(),
    }
}

/// Go's `filepath.Rel` for the paths `fileset` produces: `target` relative
/// to `base`, both relative to the same directory or both absolute.
fn go_rel(base: &str, target: &str) -> String {
    let (b, t) = (go_clean(base), go_clean(target));
    if b == t {
        return ".".to_string();
    }
    let parts = |s: &str| -> Vec<String> {
        if s == "." {
            Vec::new()
        } else {
            s.split('/').map(str::to_string).collect()
        }
    };
    let (bp, tp) = (parts(&b), parts(&t));
    let common = bp.iter().zip(&tp).take_while(|(x, y)| x == y).count();
    let mut out: Vec<String> = vec!["..".to_string(); bp.len() - common];
    out.extend(tp[common..].iter().cloned());
    out.join("/")
}

/// Reads a whole file as terraform's `file` family does; the error is the
/// argument error terraform reports.
fn read_file(path: &str, sensitive: bool) -> Result<Vec<u8>, String> {
    let p = resolve(path).map_err(|e| arg_error("path", e))?;
    let mut f = match std::fs::File::open(&p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(arg_error(
                "path",
                format!(
                    "no file exists at {}; this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource",
                    shown(&p, sensitive)
                ),
            ))
        }
        Err(e) => {
            return Err(arg_error(
                "path",
                format!("failed to read file: {}", go_io_error("open", &p, &e)),
            ))
        }
    };
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).map_err(|e| {
        arg_error(
            "path",
            format!("failed to read file: {}", go_io_error("read", &p, &e)),
        )
    })?;
    Ok(buf)
}

/// The text of a file, which must be UTF-8.
pub(super) fn read_text(path: &str, sensitive: bool) -> Result<String, String> {
    String::from_utf8(read_file(path, sensitive)?).map_err(|_| {
        format!(
            "contents of {} are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead",
            shown(path, sensitive)
        )
    })
}

fn file(a: Vec<Value>) -> FuncResult {
    let s = a[0].sensitive;
    Ok(Value::string(read_text(str_of(&a[0]), s)?).with_sensitive(s))
}

fn filebase64(a: Vec<Value>) -> FuncResult {
    let s = a[0].sensitive;
    Ok(Value::string(b64(&read_file(str_of(&a[0]), s)?)).with_sensitive(s))
}

/// The hash functions report plain I/O errors, unlike `file`.
fn file_hash(path: &Value, digest: fn(&[u8]) -> String) -> FuncResult {
    let p = resolve(str_of(path))?;
    let mut f = std::fs::File::open(&p).map_err(|e| go_io_error("open", &p, &e))?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)
        .map_err(|e| go_io_error("read", &p, &e))?;
    Ok(Value::string(digest(&buf)).with_sensitive(path.sensitive))
}

fn fileexists(a: Vec<Value>) -> FuncResult {
    use std::os::unix::fs::FileTypeExt;
    let s = a[0].sensitive;
    let p = resolve(str_of(&a[0]))?;
    let meta = match std::fs::metadata(&p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Value::bool(false).with_sensitive(s))
        }
        Err(_) => return Err(format!("failed to stat {}", shown(&p, s))),
    };
    let t = meta.file_type();
    if t.is_file() {
        return Ok(Value::bool(true).with_sensitive(s));
    }
    let name = shown(&p, s);
    // terraform blames an argument that does not exist, so these read as
    // plain call failures.
    Err(if t.is_dir() {
        format!("{name} is a directory, not a file")
    } else if t.is_block_device() || t.is_char_device() {
        format!("{name} is a device node, not a regular file")
    } else if t.is_fifo() {
        format!("{name} is a named pipe, not a regular file")
    } else if t.is_socket() {
        format!("{name} is a unix domain socket, not a regular file")
    } else {
        format!("{name} is not a regular file")
    })
}

fn fileset(a: Vec<Value>) -> FuncResult {
    let s = a[0].sensitive || a[1].sensitive;
    let raw = str_of(&a[0]);
    let base = if raw.starts_with('/') {
        raw.to_string()
    } else {
        go_join(".", raw)
    };
    let pattern = go_join(&base, str_of(&a[1]));
    let matches = glob(&pattern).map_err(|()| {
        format!(
            "failed to glob pattern {}: syntax error in pattern",
            shown(&pattern, s)
        )
    })?;
    let mut out = Vec::new();
    for m in matches {
        match std::fs::metadata(&m) {
            Ok(meta) if meta.is_file() => out.push(Value::string(go_rel(&base, &m))),
            Ok(_) => {}
            Err(e) => return Err(format!("failed to stat {}: {}", shown(&m, s), e)),
        }
    }
    Ok(Value::set(Type::String, out).with_sensitive(s))
}

/// Glob matching as the doublestar library (v1) does it for `fileset`:
/// `*`, `?`, `[class]` (`^` negates), `{a,b}` alternatives, `\` escapes, and
/// `**` for zero or more directories. A bad pattern is an error only once a
/// directory entry is compared with it.
fn glob(pattern: &str) -> Result<Vec<String>, ()> {
    if pattern.is_empty() {
        return Ok(Vec::new());
    }
    let (base, rest) = match pattern.strip_prefix('/') {
        Some(r) => ("/", r),
        None => (".", pattern),
    };
    let parts = split_unescaped(rest, '/');
    let mut out = Vec::new();
    glob_in(base.to_string(), &parts, &mut out)?;
    Ok(out)
}

fn glob_in(mut dir: String, parts: &[String], out: &mut Vec<String>) -> Result<(), ()> {
    let literal = parts
        .iter()
        .take_while(|p| !p.contains(['*', '?', '[', '{', '\\']))
        .count();
    for p in &parts[..literal] {
        dir = go_join(&dir, p);
    }
    let Ok(meta) = std::fs::symlink_metadata(&dir) else {
        return Ok(());
    };
    if literal == parts.len() {
        out.push(dir);
        return Ok(());
    }
    let is_dir = if meta.file_type().is_symlink() {
        std::fs::metadata(&dir).map(|m| m.is_dir()).unwrap_or(false)
    } else {
        meta.is_dir()
    };
    if !is_dir {
        return Ok(());
    }
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    let names: Vec<(String, bool)> = entries
        .flatten()
        .map(|e| {
            let path = e.path();
            let is_dir = std::fs::metadata(&path)
                .map(|m| m.is_dir())
                .unwrap_or(false);
            (e.file_name().to_string_lossy().into_owned(), is_dir)
        })
        .collect();
    let mut i = literal;
    if parts[i] == "**" {
        let last = i + 1 == parts.len();
        for (name, is_dir) in &names {
            let path = go_join(&dir, name);
            if *is_dir {
                if last {
                    out.push(path.clone());
                }
                glob_in(path, &parts[i..], out)?;
            } else if last {
                out.push(path);
            }
        }
        if last {
            return Ok(());
        }
        i += 1;
    }
    let pat: Vec<char> = parts[i].chars().collect();
    let last = i + 1 == parts.len();
    for (name, _) in &names {
        let n: Vec<char> = name.chars().collect();
        if match_part(&pat, &n)? {
            let path = go_join(&dir, name);
            if last {
                out.push(path);
            } else {
                glob_in(path, &parts[i + 1..], out)?;
            }
        }
    }
    Ok(())
}

/// Splits at `sep` outside `{...}` and not after a `\`.
fn split_unescaped(s: &str, sep: char) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut depth = 0usize;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        let cur = out.last_mut().expect("never empty");
        match c {
            '\\' => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '{' => {
                depth += 1;
                cur.push(c);
            }
            '}' if depth > 0 => {
                depth -= 1;
                cur.push(c);
            }
            c if c == sep && depth == 0 => out.push(String::new()),
            c => cur.push(c),
        }
    }
    out
}

/// The index of the first `c` not escaped by `\`.
fn find_unescaped(s: &[char], c: char) -> Option<usize> {
    let mut i = 0;
    while i < s.len() {
        if s[i] == '\\' {
            i += 2;
            continue;
        }
        if s[i] == c {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Matches one path component; `Err` for a malformed pattern.
fn match_part(pat: &[char], name: &[char]) -> Result<bool, ()> {
    let (mut p, mut n) = (0, 0);
    while p < pat.len() && n < name.len() {
        match pat[p] {
            '\\' => {
                p += 1;
                let Some(&c) = pat.get(p) else {
                    return Err(());
                };
                if c != name[n] {
                    return Ok(false);
                }
                p += 1;
                n += 1;
            }
            '*' => {
                p += 1;
                if p == pat.len() {
                    return Ok(true);
                }
                for k in n..name.len() {
                    if match_part(&pat[p..], &name[k..])? {
                        return Ok(true);
                    }
                }
                return Ok(false);
            }
            '[' => {
                p += 1;
                let end = p + find_unescaped(&pat[p..], ']').ok_or(())?;
                if !class_matches(&pat[p..end], name[n])? {
                    return Ok(false);
                }
                p = end + 1;
                n += 1;
            }
            '{' => {
                p += 1;
                let end = p + find_unescaped(&pat[p..], '}').ok_or(())?;
                let inner: String = pat[p..end].iter().collect();
                let rest = &pat[end + 1..];
                for alt in split_unescaped(&inner, ',') {
                    let mut whole: Vec<char> = alt.chars().collect();
                    whole.extend_from_slice(rest);
                    if match_part(&whole, &name[n..])? {
                        return Ok(true);
                    }
                }
                return Ok(false);
            }
            c if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => return Ok(false),
        }
    }
    if p == pat.len() && n == name.len() {
        return Ok(true);
    }
    let rest = &pat[p..];
    Ok(n == name.len() && (rest == ['*'] || rest == ['*', '*']))
}

/// Whether `c` is in the class body `class` (between `[` and `]`).
fn class_matches(class: &[char], c: char) -> Result<bool, ()> {
    if class.is_empty() {
        return Err(());
    }
    let negated = class[0] == '^';
    let mut i = usize::from(negated);
    let mut hit = false;
    let bound = |i: &mut usize| -> Result<char, ()> {
        let mut x = class[*i];
        *i += 1;
        if x == '\\' {
            x = *class.get(*i).ok_or(())?;
            *i += 1;
        }
        Ok(x)
    };
    while i < class.len() {
        if class[i] == '-' {
            return Err(());
        }
        let low = bound(&mut i)?;
        let mut high = low;
        if class.get(i) == Some(&'-') {
            i += 1;
            if i >= class.len() || class[i] == '-' {
                return Err(());
            }
            high = bound(&mut i)?;
        }
        hit |= low <= c && c <= high;
    }
    Ok(hit != negated)
}

/// Go's `filepath.Abs`: the working directory is `$PWD` when that names the
/// current directory, as Go's `os.Getwd` prefers it.
fn abspath(a: Vec<Value>) -> FuncResult {
    use std::os::unix::fs::MetadataExt;
    let path = str_of(&a[0]);
    let out = if path.starts_with('/') {
        go_clean(path)
    } else {
        let cwd = std::env::var("PWD")
            .ok()
            .filter(|pwd| {
                pwd.starts_with('/')
                    && match (std::fs::metadata(pwd), std::fs::metadata(".")) {
                        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
                        _ => false,
                    }
            })
            .or_else(|| {
                std::env::current_dir()
                    .ok()
                    .map(|d| d.to_string_lossy().into_owned())
            })
            .ok_or_else(|| "cannot find the working directory".to_string())?;
        go_join(&cwd, path)
    };
    Ok(Value::string(out).with_sensitive(a[0].sensitive))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_clean_like_go() {
        assert_eq!(go_clean("a/../b/./c/"), "b/c");
        assert_eq!(go_clean("/../a"), "/a");
        assert_eq!(go_clean("../../a"), "../../a");
        assert_eq!(go_clean(""), ".");
        assert_eq!(go_dir("a/b/"), "a/b");
        assert_eq!(go_dir("a"), ".");
        assert_eq!(go_base("/"), "/");
        assert_eq!(go_base("a/b//"), "b");
        assert_eq!(go_rel("sub", "hello.txt"), "../hello.txt");
        assert_eq!(go_rel(".", "sub/a.txt"), "sub/a.txt");
    }

    #[test]
    fn glob_components_match_like_doublestar() {
        let m = |p: &str, n: &str| {
            let p: Vec<char> = p.chars().collect();
            let n: Vec<char> = n.chars().collect();
            match_part(&p, &n)
        };
        assert_eq!(m("*.txt", "a.txt"), Ok(true));
        assert_eq!(m("*.txt", ".hidden.txt"), Ok(true));
        assert_eq!(m("?.txt", "ab.txt"), Ok(false));
        assert_eq!(m("[^a].txt", "b.txt"), Ok(true));
        assert_eq!(m("[a-c]", "d"), Ok(false));
        assert_eq!(m("{a,b*}.txt", "bcd.txt"), Ok(true));
        assert_eq!(m("\\*", "*"), Ok(true));
        assert_eq!(m("a*", "a"), Ok(true));
        assert_eq!(m("[", "a"), Err(()));
        assert_eq!(m("[a-", "a"), Err(()));
        assert_eq!(m("{a", "a"), Err(()));
    }
}
