//! Writes the template-copy web of `testweb::neardup` (its articles and their near-duplicate
//! copies, host `SITE`) as files, for `benches/neardup.sh` to serve with nginx and
//! `benches/neardup_truth.py` to measure: `index.html` linking to every page, page `N.html`
//! each. `--repeat R` writes the web R times over, each copy of the articles with other seeds
//! (a larger web of the same shape).
//!
//! Usage: `neardup_web DIR [--repeat R]`.

use testweb::neardup;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: neardup_web DIR [--repeat R]");
        std::process::exit(2);
    };
    let repeat: usize = match args.get(1).map(String::as_str) {
        Some("--repeat") => args.get(2).and_then(|r| r.parse().ok()).unwrap_or(1),
        _ => 1,
    };
    let dir = std::path::Path::new(dir);
    std::fs::create_dir_all(dir).unwrap();
    let mut index = String::from("<!doctype html><title>pages</title>\n");
    let mut n = 0;
    for round in 0..repeat {
        for (_, page) in neardup::pages() {
            let html = neardup::render_round(page, round);
            std::fs::write(dir.join(format!("{n}.html")), html).unwrap();
            index.push_str(&format!("<a href=\"{n}.html\">{n}</a>\n"));
            n += 1;
        }
    }
    std::fs::write(dir.join("index.html"), index).unwrap();
    eprintln!("neardup_web: {n} pages in {}", dir.display());
}
