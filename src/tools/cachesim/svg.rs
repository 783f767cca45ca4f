//! The miss-rate plot of `crawl cachesim --svg`: hand-written SVG, one line per policy, cache
//! size on a log2 axis and miss rate (0–100 %) on a linear one, as in the paper's Figure 2.

use super::Table;
use super::policy::Policy;
use std::fmt::Write;

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 480.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 60.0;
/// Line colour and dash pattern per policy, in [`Policy::ALL`] order.
const STYLE: [(&str, &str); 6] = [
    ("#d62728", "none"),
    ("#9467bd", "none"),
    ("#1f77b4", "none"),
    ("#2ca02c", "6 3"),
    ("#000000", "none"),
    ("#7f7f7f", "2 3"),
];

/// The plot of `table` (miss counts over `requests` requests) as an SVG document.
pub fn plot(table: &Table, requests: u64) -> String {
    let mut points: Vec<(f64, usize)> = table
        .sizes
        .iter()
        .enumerate()
        .map(|(row, &s)| ((s as f64).log2(), row))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let lo = points.first().map_or(0.0, |p| p.0.floor());
    let hi = points.last().map_or(1.0, |p| p.0.ceil()).max(lo + 1.0);
    let (plot_w, plot_h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |log: f64| LEFT + (log - lo) / (hi - lo) * plot_w;
    let y = |rate: f64| TOP + (1.0 - rate) * plot_h;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{}" y="18" text-anchor="middle">Miss rate by cache size ({requests} requests)</text>"#,
        LEFT + plot_w / 2.0
    );
    for tenth in 0..=10 {
        let (yy, rate) = (y(tenth as f64 / 10.0), tenth * 10);
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{rate}%</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            yy + 4.0
        );
    }
    let mut e = lo as i64;
    while e as f64 <= hi {
        let xx = x(e as f64);
        let _ = writeln!(
            svg,
            r##"<line x1="{xx:.1}" y1="{TOP}" x2="{xx:.1}" y2="{:.1}" stroke="#ddd"/><text x="{xx:.1}" y="{:.1}" text-anchor="middle">2^{e}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 18.0
        );
        e += 1;
    }
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">cache size (entries)</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 12.0
    );
    for (p, policy) in Policy::ALL.iter().enumerate() {
        let (colour, dash) = STYLE[p];
        let line: Vec<String> = points
            .iter()
            .map(|&(log, row)| {
                let rate = table.misses[row][p] as f64 / requests.max(1) as f64;
                format!("{:.1},{:.1}", x(log), y(rate))
            })
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}" points="{}"/>"#,
            line.join(" ")
        );
        let ly = TOP + 20.0 * p as f64 + 10.0;
        let lx = LEFT + plot_w + 15.0;
        let _ = writeln!(
            svg,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{}" y="{}">{}</text>"#,
            lx + 30.0,
            lx + 36.0,
            ly + 4.0,
            policy.name()
        );
    }
    svg.push_str("</svg>\n");
    svg
}
