//! Line charts to PNG for the validation pages (plotters on an RGB buffer, encoded by the
//! `image` crate; text in DejaVu Sans, embedded, so no system fonts are needed).

use anyhow::{anyhow, Context, Result};
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A polyline.
    Line,
    /// A circle per point.
    Points,
}

/// One curve of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// (x, y) points.
    pub points: Vec<[f64; 2]>,
    /// Line or points.
    pub mark: Mark,
}

impl Series {
    /// A polyline.
    pub fn line(label: impl Into<String>, points: Vec<[f64; 2]>) -> Self {
        Self {
            label: label.into(),
            points,
            mark: Mark::Line,
        }
    }

    /// Circles.
    pub fn points(label: impl Into<String>, points: Vec<[f64; 2]>) -> Self {
        Self {
            label: label.into(),
            points,
            mark: Mark::Points,
        }
    }
}

/// Where a chart's legend goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Corner {
    /// Top left.
    UpperLeft,
    /// Top right.
    #[default]
    UpperRight,
    /// Bottom left.
    LowerLeft,
    /// Bottom right.
    LowerRight,
}

/// A chart: title, axis descriptions, a logarithmic y axis or not, and its series.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// Description of the x axis.
    pub x_label: String,
    /// Description of the y axis.
    pub y_label: String,
    /// Logarithmic y axis (points with y ≤ 0 are left out).
    pub log_y: bool,
    /// The curves.
    pub series: Vec<Series>,
    /// Where the legend goes.
    pub legend: Corner,
}

const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(23, 190, 207),
];

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let font: &'static [u8] = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/fonts/DejaVuSans.ttf"
        ));
        // Registration fails only on malformed font data, which is embedded and checked by a
        // test; text would then be missing, not the chart.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, font);
    });
}

fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if log {
        return (lo / 2.0, hi * 2.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-12);
    (lo - pad, hi + pad)
}

/// Draws `chart` into a PNG of `width` × `height` at `path`.
pub fn draw(chart: &Chart, path: &Path, width: u32, height: u32) -> Result<()> {
    register_font();
    let mut pixels = vec![255u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
        let points = || chart.series.iter().flat_map(|s| s.points.iter());
        let (x0, x1) = range(points().map(|p| p[0]), false);
        let (y0, y1) = range(points().map(|p| p[1]), chart.log_y);
        let error = |e: DrawingAreaErrorKind<_>| anyhow!("drawing {}: {e:?}", path.display());
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(&chart.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70);
        macro_rules! plot {
            ($context:expr) => {{
                let mut context = $context;
                context
                    .configure_mesh()
                    .x_desc(chart.x_label.as_str())
                    .y_desc(chart.y_label.as_str())
                    .label_style(("sans-serif", 14))
                    .axis_desc_style(("sans-serif", 15))
                    .draw()
                    .map_err(error)?;
                for (k, series) in chart.series.iter().enumerate() {
                    let colour = COLOURS[k % COLOURS.len()];
                    let data: Vec<(f64, f64)> = series
                        .points
                        .iter()
                        .filter(|p| {
                            p[0].is_finite() && p[1].is_finite() && (!chart.log_y || p[1] > 0.0)
                        })
                        .map(|p| (p[0], p[1]))
                        .collect();
                    let drawn = match series.mark {
                        Mark::Line => context
                            .draw_series(LineSeries::new(data, colour.stroke_width(2)))
                            .map_err(error)?,
                        Mark::Points => context
                            .draw_series(
                                data.into_iter().map(|p| Circle::new(p, 4, colour.filled())),
                            )
                            .map_err(error)?,
                    };
                    drawn.label(series.label.as_str()).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
                    });
                }
                context
                    .configure_series_labels()
                    .label_font(("sans-serif", 14))
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .position(match chart.legend {
                        Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
                        Corner::UpperRight => SeriesLabelPosition::UpperRight,
                        Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
                        Corner::LowerRight => SeriesLabelPosition::LowerRight,
                    })
                    .draw()
                    .map_err(error)?;
            }};
        }
        if chart.log_y {
            plot!(builder
                .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
                .map_err(error)?);
        } else {
            plot!(builder.build_cartesian_2d(x0..x1, y0..y1).map_err(error)?);
        }
        root.present().map_err(error)?;
    }
    let image = image::RgbImage::from_raw(width, height, pixels)
        .ok_or_else(|| anyhow!("the chart's pixel buffer has the wrong size"))?;
    image
        .save(path)
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chart draws its title (text, so the embedded font works), its curves in their colours
    /// and a white background.
    #[test]
    fn a_chart_has_text_curves_and_background() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chart.png");
        let chart = Chart {
            title: "A straight line".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_y: false,
            series: vec![Series::line("y = x", vec![[0.0, 0.0], [1.0, 1.0]])],
            legend: Corner::UpperLeft,
        };
        draw(&chart, &path, 400, 300).unwrap();
        let image = image::open(&path).unwrap().to_rgb8();
        assert_eq!(image.dimensions(), (400, 300));
        let title_band = (0..300u32).map(|x| (x + 50, 12u32));
        let dark = title_band
            .flat_map(|(x, y)| (y..y + 14).map(move |dy| (x, dy)))
            .filter(|&(x, y)| image.get_pixel(x, y).0.iter().all(|&c| c < 128))
            .count();
        assert!(dark > 50, "{dark} dark pixels where the title is");
        let blue = image.pixels().filter(|p| p.0 == [31, 119, 180]).count();
        assert!(blue > 100, "{blue} pixels of the curve's colour");
        assert_eq!(image.get_pixel(2, 2).0, [255, 255, 255]);
    }
}
