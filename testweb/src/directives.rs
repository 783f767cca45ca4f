//! A web of page-level robots directives, `<noscript>` links and a crawler trap, for
//! `tests/it/directives.rs`.
//!
//! Host [`SITE`]'s `/` links to one page per case of [`CASES`]. Each case page links to
//! `/followed-CASE` when a crawler obeying page-level directives should follow its links, or to
//! `/nofollow-CASE` when it should not (the `rel` case has one of each, the `noscript` case links
//! only from inside `<noscript>`, in head and body). Every other path is a leaf page. Host
//! [`CALENDAR`] is an endless calendar: `/` links to a month, and every month to the month
//! before and after, so only a budget (or the depth limit) ends it; its robots.txt disallows the
//! months of 2023, so the way back is cut after one step. The site's robots.txt is a 404.

use crate::{HostSpec, Request, Response, TestWeb};
use std::io;

/// The host with the directive cases.
pub const SITE: usize = 0;
/// The host with the endless calendar.
pub const CALENDAR: usize = 1;
/// The crawler's robots token (the default User-Agent's first word).
pub const TOKEN: &str = "crawl";

/// The directive cases: name, and whether a crawler obeying directives follows its links.
pub const CASES: &[(&str, bool)] = &[
    ("meta-nofollow", false),
    ("meta-none", false),
    ("meta-token", false),
    ("meta-other-token", true),
    ("meta-noindex", true),
    ("header-nofollow", false),
    ("header-token", false),
    ("header-other-token", true),
    ("header-noindex", true),
    ("rel", true),
    ("noscript", true),
];

/// Starts the two hosts on loopback.
pub fn start() -> io::Result<TestWeb> {
    TestWeb::start(vec![HostSpec::new(site), HostSpec::new(calendar)])
}

fn site(req: &Request) -> Response {
    let path = req.target.split('?').next().unwrap_or("");
    let case = path.trim_start_matches('/');
    let link = |path: &str| format!("<a href=\"{path}\">x</a>\n");
    let followed = format!("/followed-{case}");
    let nofollow = format!("/nofollow-{case}");
    let meta = |name: &str, content: &str| {
        let target = if content.contains("nofollow") || content == "none" {
            &nofollow
        } else {
            &followed
        };
        Response::html(format!(
            "<html><head><meta name=\"{name}\" content=\"{content}\"></head><body>{}</body></html>",
            link(target)
        ))
    };
    let header =
        |value: &str, target: &str| Response::html(link(target)).with_header("X-Robots-Tag", value);
    match case {
        "robots.txt" => Response::not_found(),
        "" => Response::html(
            CASES
                .iter()
                .map(|(c, _)| link(&format!("/{c}")))
                .collect::<String>(),
        ),
        "meta-nofollow" => meta("robots", "nofollow"),
        "meta-none" => meta("ROBOTS", "none"),
        "meta-token" => meta(TOKEN, "noindex, nofollow"),
        "meta-other-token" => {
            let page = format!(
                "<meta name=\"otherbot\" content=\"nofollow\">{}",
                link(&followed)
            );
            Response::html(page)
        }
        "meta-noindex" => meta("robots", "noindex"),
        "header-nofollow" => header("nofollow", &nofollow),
        "header-token" => header(&format!("{TOKEN}: noindex, nofollow"), &nofollow),
        "header-other-token" => header("otherbot: nofollow, noindex", &followed),
        "header-noindex" => header("noindex", &followed),
        "rel" => Response::html(format!(
            "<a rel=\"external nofollow\" href=\"{nofollow}\">n</a>{}",
            link(&followed)
        )),
        "noscript" => Response::html(format!(
            "<html><head><noscript><link rel=stylesheet href=\"{followed}-head.css\"></noscript>\
             </head><body><script>document.write('<a href=/never>')</script>\
             <noscript><p>No scripts? <a href=\"{followed}-body\">This way</a></p></noscript>\
             </body></html>"
        )),
        _ => Response::html(format!("<p>leaf {path}</p>")),
    }
}

fn calendar(req: &Request) -> Response {
    let path = req.target.split('?').next().unwrap_or("");
    if path == "/robots.txt" {
        return Response::text(200, "User-agent: *\nDisallow: /cal/2023/\n");
    }
    let month = |k: i64| format!("/cal/{}/{}", k.div_euclid(12), k.rem_euclid(12) + 1);
    let Some(rest) = path.strip_prefix("/cal/") else {
        return Response::html(format!("<a href=\"{}\">calendar</a>", month(2024 * 12)));
    };
    let mut it = rest.split('/').map(|s| s.parse::<i64>().ok());
    let (Some(Some(y)), Some(Some(m))) = (it.next(), it.next()) else {
        return Response::not_found();
    };
    let k = y * 12 + (m - 1);
    Response::html(format!(
        "<a href=\"{}\">previous</a><a href=\"{}\">next</a>",
        month(k - 1),
        month(k + 1)
    ))
}
