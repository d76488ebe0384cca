//! `csvdecode`: CSV text to a list of objects, one attribute per column.
//!
//! The reader follows Go's `encoding/csv` with its defaults, which cty
//! uses: comma separated, `"` quoting with `""` for a quote, no trimming,
//! blank lines skipped, `\r\n` read as `\n`, and every record as wide as
//! the header. Its errors carry Go's wording and line numbers.

use super::{Func, FuncResult, Param};
use crate::value::{go_quote, Type, Value};
use std::collections::BTreeMap;

pub(super) fn lookup(name: &str) -> Option<Func> {
    match name {
        "csvdecode" => Some(Func::new(
            vec![Param::new("str", Type::String)],
            Type::Dynamic,
            csvdecode,
        )),
        _ => None,
    }
}

fn csvdecode(a: Vec<Value>) -> FuncResult {
    let mut r = Reader::new(a[0].as_str().unwrap_or_default().as_bytes());
    let headers = r.record().map_err(show)?.ok_or("missing header line")?;
    let mut attrs = BTreeMap::new();
    for h in &headers {
        if attrs.insert(h.clone(), Type::String).is_some() {
            return Err(format!("duplicate column name {}", go_quote(h)));
        }
    }
    let width = headers.len();
    let mut rows = Vec::new();
    while let Some(fields) = r.record().map_err(show)? {
        if fields.len() != width {
            return Err(show(CsvError {
                line: r.record_line,
                why: "wrong number of fields",
            }));
        }
        let row = headers
            .iter()
            .cloned()
            .zip(fields.into_iter().map(Value::string))
            .collect();
        rows.push(Value::object(row));
    }
    Ok(Value::list(Type::object(attrs), rows))
}

struct CsvError {
    line: usize,
    why: &'static str,
}

fn show(e: CsvError) -> String {
    format!("CSV parse error on line {}: {}", e.line, e.why)
}

const BARE_QUOTE: &str = "bare \" in non-quoted-field";
const QUOTE: &str = "extraneous or missing \" in quoted-field";

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    /// Lines read so far.
    lines: usize,
    /// The line the last record started on.
    record_line: usize,
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8]) -> Reader<'a> {
        Reader {
            data,
            at: 0,
            lines: 0,
            record_line: 0,
        }
    }

    /// The next line with its `\n` (`\r\n` read as `\n`; a last line
    /// without one loses a trailing `\r`), or `None` at the end.
    fn line(&mut self) -> Option<Vec<u8>> {
        self.lines += 1;
        let rest = &self.data[self.at..];
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        let mut line = rest[..end].to_vec();
        self.at += end;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.ends_with(b"\r\n") {
            line.remove(line.len() - 2);
        }
        Some(line)
    }

    /// The next record's fields, or `None` at the end.
    fn record(&mut self) -> Result<Option<Vec<String>>, CsvError> {
        let mut line = loop {
            match self.line() {
                None => return Ok(None),
                Some(l) if l.is_empty() || l == b"\n" => continue,
                Some(l) => break l,
            }
        };
        self.record_line = self.lines;
        let mut line_no = self.lines;
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let mut fields = Vec::new();
        loop {
            if line.first() != Some(&b'"') {
                let comma = line.iter().position(|&b| b == b',');
                let field = match comma {
                    Some(i) => &line[..i],
                    None => line.strip_suffix(b"\n").unwrap_or(&line),
                };
                if field.contains(&b'"') {
                    return Err(CsvError {
                        line: self.lines,
                        why: BARE_QUOTE,
                    });
                }
                fields.push(text(field));
                match comma {
                    Some(i) => {
                        line.drain(..=i);
                        continue;
                    }
                    None => return Ok(Some(fields)),
                }
            }
            line.remove(0);
            let mut field = Vec::new();
            loop {
                if let Some(i) = line.iter().position(|&b| b == b'"') {
                    field.extend_from_slice(&line[..i]);
                    line.drain(..=i);
                    match line.first() {
                        Some(b'"') => {
                            field.push(b'"');
                            line.remove(0);
                        }
                        Some(b',') => {
                            line.remove(0);
                            fields.push(text(&field));
                            break;
                        }
                        None | Some(b'\n') if line.len() <= 1 => {
                            fields.push(text(&field));
                            return Ok(Some(fields));
                        }
                        _ => {
                            return Err(CsvError {
                                line: self.lines,
                                why: QUOTE,
                            })
                        }
                    }
                } else if !line.is_empty() {
                    field.extend_from_slice(&line);
                    line = match self.line() {
                        Some(l) => {
                            line_no += 1;
                            l
                        }
                        None => Vec::new(),
                    };
                } else {
                    return Err(CsvError {
                        line: line_no,
                        why: QUOTE,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(s: &str) -> Result<Vec<Vec<String>>, String> {
        let mut r = Reader::new(s.as_bytes());
        let mut out = Vec::new();
        while let Some(f) = r.record().map_err(show)? {
            out.push(f);
        }
        Ok(out)
    }

    #[test]
    fn reads_as_go_encoding_csv() {
        assert_eq!(
            records("a,b\r\n\"x,\"\"y\"\"\",\n\n\"l1\r\nl2\",z").unwrap(),
            vec![vec!["a", "b"], vec!["x,\"y\"", ""], vec!["l1\nl2", "z"]]
        );
        assert_eq!(
            records("a\n1,x\"y").unwrap_err(),
            "CSV parse error on line 2: bare \" in non-quoted-field"
        );
        assert_eq!(
            records("a\n\n\"x\n\n3").unwrap_err(),
            "CSV parse error on line 5: extraneous or missing \" in quoted-field"
        );
    }
}
