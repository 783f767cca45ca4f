//! A web whose pages change, on a simulated clock, for crawl's recrawl tests and the benchmark
//! of `--recrawl-budget` (`benches/recrawl_policy.sh`).
//!
//! One host: `/` links to the pages `/p/0` … `/p/{N-1}`, each linking back to `/`. Page i
//! changes as a Poisson process of rate `rates[i]` (per simulated day): its version at time t
//! is the number of changes in (0, t], the change times drawn from the web's seed, so two webs
//! of the same spec change alike. A page's body and `ETag` name its version; a request with
//! that `ETag` in `If-None-Match` gets 304. `/` never changes. `ChangingSpec` draws the rates
//! from a skewed distribution: most pages rarely, a few often.
//!
//! The clock starts at 0 and moves only when told (`ChangingWeb::set_clock`, or the admin
//! request `/_sim/clock?t=SECONDS`, which nothing links to, so a crawler never sees it).
//! The ground truth kept as pages are served gives the survey's two metrics (`Truth`):
//! - changes captured: of the changes made to pages since each was first served, how many a
//!   fetch found, a fetch that gets a newer version than the one last served capturing one
//!   (the changes it missed in between are lost: the versions a crawler never saw);
//! - average freshness: the fraction of pages whose last served version is current, averaged
//!   over the simulated time the clock moved through (`SAMPLES` instants per move).
//!
//! `/_sim/report` answers the `Truth` as JSON.

use crate::graph::mix;
use crate::{HostSpec, Request, Response, TestWeb};
use std::io;
use std::sync::{Arc, Mutex};

const DAY: f64 = 86_400.0;
/// Instants at which freshness is measured per move of the clock.
pub const SAMPLES: u64 = 48;

/// The web's shape: page change rates log-spaced from `min_rate` to `max_rate` (per day),
/// page i's rate `min · (max/min)^(u^skew)` for u uniform in [0, 1): with `skew` above 1 most
/// pages sit near `min_rate`. The default: from once in 100 days to hourly, skew 4 (half the
/// pages change less than once in 50 days, one in eight more than daily).
#[derive(Clone, Debug)]
pub struct ChangingSpec {
    pub pages: usize,
    pub min_rate: f64,
    pub max_rate: f64,
    pub skew: f64,
    pub seed: u64,
}

impl Default for ChangingSpec {
    fn default() -> ChangingSpec {
        ChangingSpec {
            pages: 500,
            min_rate: 0.01,
            max_rate: 24.0,
            skew: 4.0,
            seed: 1,
        }
    }
}

impl ChangingSpec {
    /// The pages' change rates per day.
    pub fn rates(&self) -> Vec<f64> {
        (0..self.pages)
            .map(|i| {
                let u = unit(mix(self.seed ^ mix(i as u64 ^ 0x5eed)));
                self.min_rate * (self.max_rate / self.min_rate).powf(u.powf(self.skew))
            })
            .collect()
    }
}

/// A uniform number in [0, 1) from 64 random bits.
fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// The ground truth of what was served (see the module doc).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Truth {
    /// Page fetches (200 or 304).
    pub fetches: u64,
    /// Changes made to pages after they were first served, up to now.
    pub changes: u64,
    /// Fetches that found a newer version than the one last served.
    pub captured: u64,
    /// Freshness averaged over the clock's moves (0 before the first move).
    pub freshness: f64,
}

impl Truth {
    /// `captured / changes`.
    pub fn captured_fraction(&self) -> f64 {
        match self.changes {
            0 => 0.0,
            n => self.captured as f64 / n as f64,
        }
    }

    pub fn to_json(&self) -> String {
        format!(
            "{{\"fetches\":{},\"changes\":{},\"captured\":{},\"captured_fraction\":{:.4},\"freshness\":{:.4}}}",
            self.fetches,
            self.changes,
            self.captured,
            self.captured_fraction(),
            self.freshness
        )
    }
}

struct Sim {
    rates: Vec<f64>,
    seed: u64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    now: u64,
    /// Per page: the version last served and when it was first served.
    served: Vec<Option<(u64, u64)>>,
    fetches: u64,
    captured: u64,
    freshness_sum: f64,
    freshness_samples: u64,
}

impl Sim {
    /// Changes of page `i` in (0, t]: exponential gaps of mean 1/rate, drawn from the seed.
    fn version(&self, i: usize, t: u64) -> u64 {
        let rate = self.rates[i] / DAY;
        if rate <= 0.0 {
            return 0;
        }
        let (mut at, mut n) = (0.0, 0u64);
        loop {
            let u = unit(mix(self.seed ^ mix((i as u64) << 32 ^ n)));
            at += -(1.0 - u).ln() / rate;
            if at > t as f64 {
                return n;
            }
            n += 1;
        }
    }

    fn serve(&self, i: usize, etag_sent: Option<&str>) -> Response {
        let mut state = self.state.lock().unwrap();
        let now = state.now;
        let version = self.version(i, now);
        state.fetches += 1;
        let first = match state.served[i] {
            Some((last, first)) => {
                state.captured += u64::from(last != version);
                first
            }
            None => now,
        };
        state.served[i] = Some((version, first));
        drop(state);
        let etag = format!("\"{i}-{version}\"");
        if etag_sent.is_some_and(|sent| sent.split(',').any(|tag| tag.trim() == etag)) {
            return Response {
                status: 304,
                headers: vec![("ETag".into(), etag)],
                body: crate::Body::Bytes(Vec::new()),
            };
        }
        Response::html(format!(
            "<!DOCTYPE html><html><head><title>page {i}</title></head><body>\
             <p>page {i}, version {version}</p><a href=\"/\">home</a></body></html>"
        ))
        .with_header("ETag", etag)
    }

    /// Moves the clock to `t`, measuring freshness at `SAMPLES` instants on the way.
    fn set_clock(&self, t: u64) {
        let mut state = self.state.lock().unwrap();
        let from = state.now;
        if t > from {
            let pages = self.rates.len().max(1) as f64;
            for k in 0..SAMPLES {
                let at = from + ((t - from) as f64 * (k as f64 + 0.5) / SAMPLES as f64) as u64;
                let fresh = (state.served.iter().enumerate())
                    .filter(|(i, s)| s.is_some_and(|(v, _)| v == self.version(*i, at)))
                    .count();
                state.freshness_sum += fresh as f64 / pages;
                state.freshness_samples += 1;
            }
        }
        state.now = t;
    }

    fn truth(&self) -> Truth {
        let state = self.state.lock().unwrap();
        let changes = (state.served.iter().enumerate())
            .filter_map(|(i, s)| s.map(|(_, first)| (i, first)))
            .map(|(i, first)| self.version(i, state.now) - self.version(i, first))
            .sum();
        Truth {
            fetches: state.fetches,
            changes,
            captured: state.captured,
            freshness: match state.freshness_samples {
                0 => 0.0,
                n => state.freshness_sum / n as f64,
            },
        }
    }

    fn answer(&self, r: &Request) -> Response {
        let (path, query) = r.target.split_once('?').unwrap_or((&r.target, ""));
        match path {
            "/" => {
                let mut html = String::from("<!DOCTYPE html><html><body>");
                for i in 0..self.rates.len() {
                    html.push_str(&format!("<a href=\"/p/{i}\">{i}</a>\n"));
                }
                html.push_str("</body></html>");
                Response::html(html)
            }
            "/_sim/clock" => match query.strip_prefix("t=").and_then(|t| t.parse().ok()) {
                Some(t) => {
                    self.set_clock(t);
                    Response::text(200, format!("{t}\n"))
                }
                None => Response::text(400, "want /_sim/clock?t=SECONDS\n"),
            },
            "/_sim/report" => Response::new(200, "application/json", self.truth().to_json()),
            _ => match path
                .strip_prefix("/p/")
                .and_then(|i| i.parse::<usize>().ok())
            {
                Some(i) if i < self.rates.len() => self.serve(i, r.header("if-none-match")),
                _ => Response::not_found(),
            },
        }
    }
}

/// The changing web, served (see the module doc).
pub struct ChangingWeb {
    web: TestWeb,
    sim: Arc<Sim>,
}

impl ChangingWeb {
    /// Serves pages with rates drawn by `spec`.
    pub fn start(spec: &ChangingSpec) -> io::Result<ChangingWeb> {
        ChangingWeb::with_rates(spec.rates(), spec.seed)
    }

    /// Serves one page per rate (changes per simulated day), the change times drawn from `seed`.
    pub fn with_rates(rates: Vec<f64>, seed: u64) -> io::Result<ChangingWeb> {
        let sim = Arc::new(Sim {
            state: Mutex::new(State {
                served: vec![None; rates.len()],
                ..State::default()
            }),
            rates,
            seed,
        });
        let serving = Arc::clone(&sim);
        let web = TestWeb::start(vec![HostSpec::new(move |r| serving.answer(r))])?;
        Ok(ChangingWeb { web, sim })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        self.web.origin(0)
    }

    /// The URL of page `i`.
    pub fn page_url(&self, i: usize) -> String {
        self.web.url(0, &format!("/p/{i}"))
    }

    /// Moves the simulated clock to `t` seconds (never back).
    pub fn set_clock(&self, t: u64) {
        self.sim.set_clock(t);
    }

    /// The ground truth so far.
    pub fn truth(&self) -> Truth {
        self.sim.truth()
    }

    /// The version of page `i` at simulated time `t`.
    pub fn version(&self, i: usize, t: u64) -> u64 {
        self.sim.version(i, t)
    }

    /// The server, for its request log.
    pub fn web(&self) -> &TestWeb {
        &self.web
    }

    pub fn shutdown(self) {
        self.web.shutdown();
    }
}

/// `testweb --changing PAGES --seeds-out FILE [--seed N] [--min-rate R] [--max-rate R]
/// [--skew S] [--max-seconds N]`: serves the web until stdin's EOF, then prints the `Truth`.
pub fn main(args: &[String]) -> Result<String, String> {
    let mut spec = ChangingSpec::default();
    let (mut seeds_out, mut max_seconds) = (None, 3600u64);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let real = || {
            value
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("{flag}: not a non-negative number: {value:?}"))
        };
        match flag.as_str() {
            "--changing" => spec.pages = real()? as usize,
            "--seed" => spec.seed = real()? as u64,
            "--min-rate" => spec.min_rate = real()?,
            "--max-rate" => spec.max_rate = real()?,
            "--skew" => spec.skew = real()?,
            "--max-seconds" => max_seconds = real()? as u64,
            "--seeds-out" => seeds_out = Some(value.clone()),
            _ => return Err(format!("--changing: unknown argument {flag:?}")),
        }
    }
    let seeds_out = seeds_out.ok_or("--changing needs --seeds-out FILE")?;
    let web = ChangingWeb::start(&spec).map_err(|e| format!("starting the web: {e}"))?;
    let tmp = format!("{seeds_out}.tmp");
    std::fs::write(&tmp, format!("{}/\n", web.origin()))
        .and_then(|_| std::fs::rename(&tmp, &seeds_out))
        .map_err(|e| format!("cannot write {seeds_out}: {e}"))?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = tx.send(());
    });
    let _ = rx.recv_timeout(std::time::Duration::from_secs(max_seconds));
    let truth = web.truth();
    web.shutdown();
    Ok(truth.to_json())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_count_poisson_changes_at_about_the_rate() {
        let sim = Sim {
            rates: vec![0.0, 2.0],
            seed: 7,
            state: Mutex::default(),
        };
        assert_eq!(sim.version(0, 1_000_000), 0);
        let days = 2_000u64;
        let changes = sim.version(1, days * 86_400);
        assert!((3_800..4_200).contains(&changes), "{changes}");
        assert!(sim.version(1, 86_400) <= sim.version(1, 2 * 86_400));
    }

    #[test]
    fn rates_are_skewed_most_pages_rarely() {
        let rates = ChangingSpec::default().rates();
        let slow = rates.iter().filter(|&&r| r < 0.2).count();
        let fast = rates.iter().filter(|&&r| r > 1.0).count();
        assert!(slow > rates.len() / 2 && fast > 0 && fast < rates.len() / 5);
        assert_eq!(
            rates,
            ChangingSpec::default().rates(),
            "the seed fixes them"
        );
    }

    #[test]
    fn fetches_capture_changes_and_freshness_decays() {
        let web = ChangingWeb::with_rates(vec![0.0, 1000.0], 3).unwrap();
        let get = |i| {
            web.sim.answer(&Request {
                method: "GET".into(),
                target: format!("/p/{i}"),
                headers: Vec::new(),
            })
        };
        assert_eq!((get(0).status, get(1).status), (200, 200));
        web.set_clock(86_400);
        let truth = web.truth();
        assert_eq!((truth.fetches, truth.captured), (2, 0));
        assert!(truth.changes > 900, "{truth:?}");
        // Page 0 never changes, page 1 within seconds: half fresh.
        assert!((truth.freshness - 0.5).abs() < 0.03, "{truth:?}");
        get(1);
        assert_eq!(web.truth().captured, 1);
        let answer = web.sim.answer(&Request {
            method: "GET".into(),
            target: "/p/0".into(),
            headers: vec![("If-None-Match".into(), "\"0-0\"".into())],
        });
        assert_eq!(answer.status, 304);
        web.shutdown();
    }
}
