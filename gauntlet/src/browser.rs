//! Headless Chromium, reading the site as a reader's browser does: the DOM
//! after a page loads from disk, and screenshots at a window size.
//!
//! Each call starts a fresh browser with its own empty profile and none of
//! its network services (the pages need none, and the machine may have no
//! network), under a `Guard`, so nothing outlives the call. What the DOM
//! should hold is the caller's business; this module only looks.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::process::{Guard, ProcessError};

/// The widths the site is looked at: a desktop window and a phone.
pub const WIDTHS: [(&str, (u32, u32)); 2] = [("desktop", (1280, 1600)), ("phone", (390, 1500))];

/// How long one page may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The names Chromium goes by on PATH, in the order they are tried.
const NAMES: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error("{page}: the layout probe left no answer in the page it loaded")]
    Probe { page: PathBuf },
    #[error("no Chromium: none of {tried} is on PATH; install Debian's chromium (apt-get install -y chromium) or name one in CHROMIUM")]
    Missing { tried: String },
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error("{program} did not finish loading {page} within {secs}s")]
    Timeout {
        program: PathBuf,
        page: PathBuf,
        secs: u64,
    },
    #[error("{program} failed on {page} ({status}):\n{stderr}")]
    Failed {
        program: PathBuf,
        page: PathBuf,
        status: String,
        stderr: String,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a PNG: {source}")]
    Png {
        path: PathBuf,
        source: png::DecodingError,
    },
    #[error("{path}: the screenshot is blank ({shot})")]
    Blank { path: PathBuf, shot: Shot },
}

/// A Chromium binary.
#[derive(Debug, Clone)]
pub struct Chromium {
    pub program: PathBuf,
}

/// What a screenshot shows, roughly: its size, how many colours it has and
/// how much of it differs from its most common colour (the background).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shot {
    pub width: u32,
    pub height: u32,
    pub colours: usize,
    /// The share of pixels not of the background colour.
    pub ink: f64,
}

impl fmt::Display for Shot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}x{}, {} colours, {:.1}% ink",
            self.width,
            self.height,
            self.colours,
            self.ink * 100.0
        )
    }
}

impl Shot {
    /// Read a PNG.
    pub fn read(path: &Path) -> Result<Shot, BrowserError> {
        let png_err = |source| BrowserError::Png {
            path: path.to_owned(),
            source,
        };
        let file = fs::File::open(path).map_err(|source| BrowserError::Io {
            path: path.to_owned(),
            source,
        })?;
        let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().map_err(png_err)?;
        let mut buf = vec![0; reader.output_buffer_size().unwrap_or(0)];
        let info = reader.next_frame(&mut buf).map_err(png_err)?;
        let channels = info.color_type.samples();
        let mut counts = std::collections::HashMap::<&[u8], usize>::new();
        for px in buf[..info.buffer_size()].chunks_exact(channels) {
            *counts.entry(px).or_default() += 1;
        }
        let total = (info.width as usize * info.height as usize).max(1);
        let background = counts.values().copied().max().unwrap_or(0);
        Ok(Shot {
            width: info.width,
            height: info.height,
            colours: counts.len(),
            ink: (total - background) as f64 / total as f64,
        })
    }

    /// Whether the picture shows nothing: one or two colours, or all but a
    /// sliver of it background.
    pub fn blank(&self) -> bool {
        self.colours < 3 || self.ink < 0.01
    }
}

/// A `file://` URL for a path, with what a URL cannot carry escaped.
fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for c in path.to_string_lossy().chars() {
        match c {
            ' ' => url.push_str("%20"),
            '%' => url.push_str("%25"),
            '#' => url.push_str("%23"),
            '?' => url.push_str("%3F"),
            c => url.push(c),
        }
    }
    url
}

impl Chromium {
    /// `CHROMIUM` if set, else the first of Chromium's names on PATH.
    pub fn find() -> Result<Chromium, BrowserError> {
        if let Some(p) = std::env::var_os("CHROMIUM").filter(|p| !p.is_empty()) {
            return Ok(Chromium { program: p.into() });
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        for name in NAMES {
            for dir in std::env::split_paths(&path) {
                let candidate = dir.join(name);
                if candidate.is_file() {
                    return Ok(Chromium { program: candidate });
                }
            }
        }
        Err(BrowserError::Missing {
            tried: NAMES.join(", "),
        })
    }

    /// Load `page` headless and return what it printed to stdout.
    fn run(&self, page: &Path, extra: &[String]) -> Result<Vec<u8>, BrowserError> {
        let scratch = tempfile::tempdir().map_err(|source| BrowserError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| BrowserError::Io { path, source }
        };
        let page = page.canonicalize().map_err(io(page))?;
        let out_path = scratch.path().join("stdout");
        let err_path = scratch.path().join("stderr");
        let out = fs::File::create(&out_path).map_err(io(&out_path))?;
        let err = fs::File::create(&err_path).map_err(io(&err_path))?;
        let mut cmd = Command::new(&self.program);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.path().join("profile").display()
        ))
        .args(extra)
        .arg(file_url(&page))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
        let mut guard = Guard::spawn(cmd, "chromium")?;
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Some(status) = guard.try_wait() {
                break status;
            }
            if Instant::now() > deadline {
                return Err(BrowserError::Timeout {
                    program: self.program.clone(),
                    page,
                    secs: TIMEOUT.as_secs(),
                });
            }
            thread::sleep(Duration::from_millis(50));
        };
        drop(guard);
        if !status.success() {
            let stderr = fs::read_to_string(&err_path).unwrap_or_default();
            return Err(BrowserError::Failed {
                program: self.program.clone(),
                page,
                status: status.to_string(),
                stderr: stderr
                    .lines()
                    .rev()
                    .take(20)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n"),
            });
        }
        fs::read(&out_path).map_err(io(&out_path))
    }

    /// The page's DOM once it has loaded, serialized.
    pub fn dump_dom(&self, page: &Path) -> Result<String, BrowserError> {
        let out = self.run(page, &["--dump-dom".into()])?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// A screenshot of the page in a window of `size`, written to `png`;
    /// a blank one is an error.
    pub fn screenshot(
        &self,
        page: &Path,
        size: (u32, u32),
        png: &Path,
    ) -> Result<Shot, BrowserError> {
        if let Some(dir) = png.parent() {
            fs::create_dir_all(dir).map_err(|source| BrowserError::Io {
                path: dir.to_owned(),
                source,
            })?;
        }
        let target = std::path::absolute(png).map_err(|source| BrowserError::Io {
            path: png.to_owned(),
            source,
        })?;
        let _ = fs::remove_file(&target);
        self.run(
            page,
            &[
                format!("--window-size={},{}", size.0, size.1),
                format!("--screenshot={}", target.display()),
            ],
        )?;
        let shot = Shot::read(&target)?;
        if shot.blank() {
            return Err(BrowserError::Blank { path: target, shot });
        }
        Ok(shot)
    }
}

/// The script [`Chromium::layout_faults`] appends to a copy of a page, with
/// `WIDTH` replaced by the width to probe: it lists, one per line in `<pre
/// id="layout-faults">`, each table cell whose content is wider than the
/// cell or that reaches past that width, anything else reaching past it
/// outside a box that scrolls sideways (the page would), and each chart
/// text drawn smaller than 8 px. Chromium's headless window is never
/// narrower than 500 px, so a narrower width is probed by narrowing the
/// page's root box: the layout is the same wherever the stylesheet's
/// breakpoints agree for both widths (the site's one is 42rem, 672 px).
const PROBE: &str = r#"<script>
(function () {
  var w = WIDTH, out = [];
  if (window.innerWidth > w) document.documentElement.style.width = w + 'px';
  function name(el) {
    return el.tagName.toLowerCase() + ' "' + el.textContent.trim().replace(/\s+/g, ' ').slice(0, 60) + '"';
  }
  function scrolls(el) {
    for (var p = el.parentElement; p; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll') return true;
    }
    return false;
  }
  var past = 0, widest = '';
  document.querySelectorAll('body *').forEach(function (el) {
    if (el.getClientRects().length === 0) return;
    var r = el.getBoundingClientRect();
    var cell = el.tagName === 'TD' || el.tagName === 'TH';
    if (cell && el.scrollWidth > el.clientWidth + 1) {
      out.push('content wider than its cell (' + el.scrollWidth + ' > ' + el.clientWidth + ' px): ' + name(el));
    }
    if (cell && (r.right > w + 1 || r.left < -1)) {
      out.push('a cell past the window edge (' + Math.round(r.left) + ' to ' + Math.round(r.right) + ' px): ' + name(el));
    } else if (!cell && r.right > w + 1 && !scrolls(el)) {
      if (r.right > past) { past = Math.round(r.right); widest = name(el); }
    }
  });
  if (past > 0) out.push('the page scrolls sideways: ' + widest + ' reaches ' + past + ' px in a ' + w + ' px window');
  document.querySelectorAll('svg text').forEach(function (t) {
    var m = t.getScreenCTM();
    if (!m || t.getClientRects().length === 0) return;
    var px = parseFloat(getComputedStyle(t).fontSize) * Math.sqrt(m.a * m.a + m.b * m.b);
    if (px < 8) out.push('chart text drawn at ' + px.toFixed(1) + ' px: ' + name(t));
  });
  var pre = document.createElement('pre');
  pre.id = 'layout-faults';
  pre.textContent = out.join('\n').replace(/[<>&]/g, '?');
  document.body.appendChild(pre);
})();
</script>"#;

impl Chromium {
    /// Load a copy of `page` carrying [`PROBE`] in a window `width` px
    /// wide, and return what it found wrong with the layout: empty when
    /// every cell's content fits its cell and the window, and every chart
    /// label is legible.
    pub fn layout_faults(&self, page: &Path, width: u32) -> Result<Vec<String>, BrowserError> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| BrowserError::Io { path, source }
        };
        let html = fs::read_to_string(page).map_err(io(page))?;
        let scratch = tempfile::tempdir().map_err(io(&std::env::temp_dir()))?;
        let probe = scratch.path().join("probe.html");
        let probe_script = PROBE.replace("WIDTH", &width.to_string());
        let html = match html.rfind("</body>") {
            Some(at) => format!("{}{probe_script}{}", &html[..at], &html[at..]),
            None => format!("{html}{probe_script}"),
        };
        fs::write(&probe, html).map_err(io(&probe))?;
        let out = self.run(
            &probe,
            &[format!("--window-size={width},900"), "--dump-dom".into()],
        )?;
        let dom = String::from_utf8_lossy(&out);
        let found = dom
            .split_once("<pre id=\"layout-faults\">")
            .and_then(|(_, rest)| rest.split_once("</pre>"))
            .map(|(faults, _)| faults.to_owned())
            .ok_or_else(|| BrowserError::Probe {
                page: page.to_owned(),
            })?;
        Ok(found
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| l.replace("&quot;", "\"").replace("&amp;", "&"))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_png(path: &Path, width: u32, height: u32, pixel: impl Fn(u32, u32) -> [u8; 3]) {
        let file = fs::File::create(path).unwrap();
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().unwrap();
        let data: Vec<u8> = (0..height)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .flat_map(|(x, y)| pixel(x, y))
            .collect();
        w.write_image_data(&data).unwrap();
    }

    #[test]
    fn a_white_page_is_blank_and_one_with_ink_is_not() {
        let d = tempfile::tempdir().unwrap();
        let white = d.path().join("white.png");
        write_png(&white, 40, 30, |_, _| [255, 255, 255]);
        let shot = Shot::read(&white).unwrap();
        assert_eq!((shot.width, shot.height, shot.colours), (40, 30, 1));
        assert!(shot.blank());
        let drawn = d.path().join("drawn.png");
        write_png(&drawn, 40, 30, |x, y| match (x < 10, y < 5) {
            (true, _) => [31, 95, 168],
            (_, true) => [200, 105, 28],
            _ => [255, 255, 255],
        });
        let shot = Shot::read(&drawn).unwrap();
        assert_eq!(shot.colours, 3);
        assert!((shot.ink - (300.0 + 150.0) / 1200.0).abs() < 1e-9, "{shot}");
        assert!(!shot.blank());
        let e = Shot::read(&d.path().join("none.png")).unwrap_err();
        assert!(e.to_string().contains("none.png"), "{e}");
    }

    #[test]
    fn a_path_becomes_a_file_url() {
        assert_eq!(
            file_url(Path::new("/tmp/a b/#1?/index.html")),
            "file:///tmp/a%20b/%231%3F/index.html"
        );
    }
}
