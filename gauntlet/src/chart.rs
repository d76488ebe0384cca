//! Charts as SVG text, drawn in Rust with plotters' SVG backend: no script
//! and no font file (labels are SVG text in the reader's sans-serif), so a
//! page shows them from disk with no network.
//!
//! Two shapes: paired horizontal bars (each stage's time, the engine beside
//! stock terraform) and lines against a numeric x (the plan-from-nothing
//! figures against object count). Which figures to draw is the pages'
//! business (`report`, `site`); this module only draws.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The engine's colour on every chart and page.
pub const ENGINE: RGBColor = RGBColor(0x1f, 0x5f, 0xa8);
/// Stock terraform's colour.
pub const STOCK: RGBColor = RGBColor(0xc8, 0x69, 0x1c);
/// A third series (the engine without its record store).
pub const THIRD: RGBColor = RGBColor(0x2e, 0x8b, 0x57);

/// The faint lines between the labelled ones.
const GRID: RGBColor = RGBColor(0xf0, 0xf0, 0xf0);

const WIDTH: u32 = 860;
const FONT: &str = "sans-serif";

#[derive(Debug, thiserror::Error)]
#[error("drawing the chart {caption:?}: {message}")]
pub struct ChartError {
    caption: String,
    message: String,
}

/// Paired bars: one row per item, two values each.
pub struct Bars<'a> {
    pub caption: &'a str,
    /// What the values are: `seconds`.
    pub unit: &'a str,
    /// The two series' names, drawn upper then lower in each row.
    pub names: [&'a str; 2],
    pub rows: Vec<(String, [f64; 2])>,
}

/// One line of a line chart.
pub struct Series<'a> {
    pub name: &'a str,
    pub colour: RGBColor,
    pub points: Vec<(f64, f64)>,
}

/// Room for the longest label of the bar chart's rows, in pixels.
fn label_width(rows: &[(String, [f64; 2])]) -> u32 {
    let longest = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    (longest as u32 * 7 + 16).clamp(60, 300)
}

/// `12.3` as a value's label: whole above 100 or when whole, one decimal
/// below.
fn figure(v: f64) -> String {
    if v >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Paired horizontal bars as an SVG document.
pub fn paired_bars(b: &Bars) -> Result<String, ChartError> {
    let fail = |e: &dyn std::fmt::Display| ChartError {
        caption: b.caption.to_owned(),
        message: e.to_string(),
    };
    let n = b.rows.len();
    let height = 96 + 36 * n as u32;
    let max = b
        .rows
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.12;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        // Row i sits in [n-1-i, n-i): the first row on top.
        let mut chart = ChartBuilder::on(&root)
            .caption(b.caption, (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(label_width(&b.rows))
            .build_cartesian_2d(0f64..max, 0f64..n as f64)
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .light_line_style(GRID)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .x_desc(b.unit)
            .label_style((FONT, 13))
            .draw()
            .map_err(|e| fail(&e))?;
        // The rows' names, right-aligned against the axis.
        let name_style =
            TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        for (i, (name, _)) in b.rows.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(0.0, (n - i) as f64 - 0.5));
            root.draw(&Text::new(name.as_str(), (x - 8, y), name_style.clone()))
                .map_err(|e| fail(&e))?;
        }
        let value_style =
            TextStyle::from((FONT, 11).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        for (k, colour) in [(0, ENGINE), (1, STOCK)] {
            let band = |i: usize| {
                let y = (n - 1 - i) as f64;
                if k == 0 {
                    (y + 0.52, y + 0.88)
                } else {
                    (y + 0.12, y + 0.48)
                }
            };
            chart
                .draw_series(b.rows.iter().enumerate().map(|(i, (_, v))| {
                    let (lo, hi) = band(i);
                    Rectangle::new([(0.0, lo), (v[k], hi)], colour.filled())
                }))
                .map_err(|e| fail(&e))?
                .label(b.names[k])
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 14, y + 6)], colour.filled())
                });
            // A zero has no bar and no figure: the tool did not run.
            chart
                .draw_series(
                    b.rows
                        .iter()
                        .enumerate()
                        .filter(|(_, (_, v))| v[k] > 0.0)
                        .map(|(i, (_, v))| {
                            let (lo, hi) = band(i);
                            Text::new(
                                figure(v[k]),
                                (v[k] + max * 0.005, (lo + hi) / 2.0),
                                value_style.clone(),
                            )
                        }),
                )
                .map_err(|e| fail(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font((FONT, 13))
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(svg)
}

/// Lines against a numeric x, each point marked and labelled with its
/// value, as an SVG document.
pub fn lines(
    caption: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<String, ChartError> {
    let fail = |e: &dyn std::fmt::Display| ChartError {
        caption: caption.to_owned(),
        message: e.to_string(),
    };
    let points = || series.iter().flat_map(|s| s.points.iter().copied());
    let x_max = points().map(|p| p.0).fold(0.0, f64::max).max(1.0) * 1.08;
    let y_max = points().map(|p| p.1).fold(0.0, f64::max).max(1.0) * 1.15;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, (FONT, 18))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .light_line_style(GRID)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style((FONT, 13))
            .draw()
            .map_err(|e| fail(&e))?;
        let value_style =
            TextStyle::from((FONT, 11).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        for (k, s) in series.iter().enumerate() {
            // Each series' labels a step apart, so close points stay legible.
            let step = (k as f64 - (series.len() as f64 - 1.0) / 2.0) * y_max * 0.05;
            let colour = s.colour;
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    colour.stroke_width(2),
                ))
                .map_err(|e| fail(&e))?
                .label(s.name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                });
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 4, colour.filled())))
                .map_err(|e| fail(&e))?;
            chart
                .draw_series(s.points.iter().map(|&(x, y)| {
                    Text::new(
                        figure(y),
                        (x + x_max * 0.008, y + step),
                        value_style.color(&colour),
                    )
                }))
                .map_err(|e| fail(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FONT, 13))
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filled rectangles of one colour in an SVG document.
    fn rects(svg: &str, colour: RGBColor) -> usize {
        let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", colour.0, colour.1, colour.2);
        svg.split("<rect")
            .skip(1)
            .filter(|r| r.split('>').next().unwrap().contains(&fill))
            .count()
    }

    #[test]
    fn bars_draw_one_pair_a_row_with_labels() {
        let svg = paired_bars(&Bars {
            caption: "Each stage",
            unit: "seconds",
            names: ["choudoufu", "terraform"],
            rows: vec![
                ("Cold deploy".into(), [0.0, 76.7]),
                ("Replace with create_before_destroy".into(), [12.5, 30.0]),
            ],
        })
        .unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("viewBox"));
        // Two bars and a legend swatch per series.
        assert_eq!(rects(&svg, ENGINE), 3, "{svg}");
        assert_eq!(rects(&svg, STOCK), 3, "{svg}");
        for text in [
            "Cold deploy",
            "Replace with create_before_destroy",
            "76.7",
            "12.5",
            "choudoufu",
            "seconds",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(!svg.contains("<script"));
    }

    #[test]
    fn lines_mark_every_point() {
        let svg = lines(
            "Plan",
            "objects",
            "seconds",
            &[
                Series {
                    name: "terraform",
                    colour: STOCK,
                    points: vec![(15.0, 8.9), (100.0, 11.9), (500.0, 27.7)],
                },
                Series {
                    name: "choudoufu",
                    colour: ENGINE,
                    points: vec![(15.0, 4.3), (100.0, 6.1), (500.0, 19.2)],
                },
            ],
        )
        .unwrap();
        assert_eq!(svg.matches("<circle").count(), 6, "{svg}");
        assert!(svg.matches("<polyline").count() >= 2, "{svg}");
        for text in ["27.7", "19.2", "objects", "terraform", "choudoufu"] {
            assert!(svg.contains(text), "{text} missing");
        }
    }
}
