// Port of go-trafilatura/internal/selector/selector.go

pub(crate) mod comments;
pub(crate) mod content;
pub(crate) mod discard;
pub(crate) mod metadata;
pub(crate) mod utils;

use crate::dom::{Document, NodeId};

/// A selector rule: a predicate that tests a single element node.
///
/// Port of Go's `type Rule func(*html.Node) bool`.
pub(crate) type Rule = fn(&Document, NodeId) -> bool;

/// (Patch of crawl.) What the content and discard rules read of an element: its tag name
/// (lower case) and attributes. A `Document`'s element is one; so is an element `crawl` reads
/// in its one-pass extractor, which applies the same rules without building a tree.
pub trait Element {
    /// The tag name, lower case.
    fn tag(&self) -> &str;
    /// The value of attribute `name`, if the element has it.
    fn attribute(&self, name: &str) -> Option<&str>;
    /// The value of attribute `name`, empty if the element has none.
    fn attr(&self, name: &str) -> &str {
        self.attribute(name).unwrap_or("")
    }
}

impl Element for (&Document, NodeId) {
    fn tag(&self) -> &str {
        self.0.tag_name(self.1)
    }
    fn attribute(&self, name: &str) -> Option<&str> {
        self.0.attr_ref(self.1, name)
    }
}

/// Returns the first element in the subtree of `root` that satisfies any rule,
/// searching in document order.
///
/// Port of `Query`. Note: Go's `Query` takes a single `Rule`; in Rust we accept a
/// slice and OR them together here. This matches the behavior at Go call sites where
/// callers pass rule slices (e.g. `selector.Content`) as a composite predicate.
pub(crate) fn query(doc: &Document, root: NodeId, rules: &[Rule]) -> Option<NodeId> {
    for id in doc.get_elements_by_tag_name(root, "*") {
        for rule in rules {
            if rule(doc, id) {
                return Some(id);
            }
        }
    }
    None
}

/// Returns all elements in the subtree of `root` that satisfy any rule,
/// in document order.
///
/// Port of `QueryAll`.
pub(crate) fn query_all(doc: &Document, root: NodeId, rules: &[Rule]) -> Vec<NodeId> {
    let mut matches = Vec::new();
    for id in doc.get_elements_by_tag_name(root, "*") {
        for rule in rules {
            if rule(doc, id) {
                matches.push(id);
                break;
            }
        }
    }
    matches
}

/// (Patch of crawl.) Every string the rules of `crate::rules` look for in an attribute (their
/// needles; the tag and attribute names they read are `RULE_NAMES`). An element none of whose
/// attributes holds one of them (in any case, `id` and `class` also read as one string, `id`
/// then `class`, and `id` then `style`) matches none of those rules but by its tag and by
/// `data-lp-replacement-content`: a caller can skip them for it (`test_rule_needles_are_listed`
/// checks the list against the rules' source).
pub const RULE_NEEDLES: &[&str] = &[
    " ad ",
    " hidden",
    " hide",
    "-ad-",
    "-hide-",
    "-icon",
    "-reply-",
    "-stories",
    "ArticleContent",
    "Comment",
    "MostPopularStories",
    "ZendeskForm",
    "akismet",
    "art-content",
    "art-postcontent",
    "article",
    "article-body",
    "article-comments",
    "article-content",
    "article-infos",
    "article-text",
    "articleBody",
    "articleContent",
    "article__body",
    "article__container",
    "article__content",
    "articlebody",
    "articletext",
    "attachment",
    "author",
    "avigation",
    "banner",
    "bar",
    "blog-content",
    "blurred",
    "bmdh",
    "body-text",
    "bread-crumb",
    "breadcrumb",
    "button",
    "byline",
    "caption",
    "cell",
    "comment",
    "comments-title",
    "comol",
    "consent",
    "content",
    "content-body",
    "content-main",
    "contentBody",
    "content__body",
    "content_main",
    "cookie",
    "criteo",
    "display: none",
    "display:none",
    "disqus_thread",
    "dpsp-content",
    "dsq-comments",
    "elated",
    "embed",
    "embedded",
    "entry",
    "entry-content",
    "expand",
    "field-body",
    "footer",
    "fulltext",
    "hidden",
    "hide-",
    "hide-print",
    "jp-",
    "main",
    "main-column",
    "main-content",
    "menu",
    "message",
    "message-container",
    "meta",
    "modal-content",
    "mol-factbox",
    "most-popular",
    "nav",
    "navbar",
    "navbox",
    "newsletter",
    "next-",
    "nfoline",
    "nocomments",
    "noprint",
    "notloaded",
    "obfuscated",
    "options",
    "outbrain",
    "overlay",
    "page-content",
    "paid-content",
    "paidcontent",
    "permission",
    "post",
    "post-body",
    "post-bodycopy",
    "post-comments",
    "post-content",
    "post-entry",
    "post-nav",
    "post-text",
    "post_content",
    "post_inner_wrapper",
    "post_text",
    "postarea",
    "postcontent",
    "postentry",
    "premium",
    "primary",
    "rating",
    "reader-comments",
    "related",
    "reply-",
    "section-content",
    "shar",
    "share",
    "share-",
    "sidebar",
    "single-content",
    "single-post",
    "slide",
    "sociable",
    "social",
    "story",
    "story-body",
    "story-content",
    "storycontent",
    "subnav",
    "suggest-links",
    "syndication",
    "taboola",
    "tag-list",
    "tags",
    "teaser",
    "text",
    "text-content",
    "theme-content",
    "timestamp",
    "true",
    "user-info",
    "user-profile",
    "viewport",
    "viral",
    "widget",
    "wpb_text_column",
    "xg1",
    "yin",
    "zlylin",
];

/// (Patch of crawl.) The tag and attribute names the rules of `crate::rules` read.
#[cfg(test)]
const RULE_NAMES: &[&str] = &[
    "div",
    "p",
    "li",
    "ul",
    "ol",
    "dl",
    "dd",
    "dt",
    "span",
    "section",
    "details",
    "class",
    "id",
    "role",
    "itemprop",
    "style",
    "aria-hidden",
    "data-component",
    "data-lp-replacement-content",
];

#[cfg(test)]
mod needle_tests {
    use super::*;

    /// Every string literal in the rules `crate::rules` applies is a needle or a name.
    #[test]
    fn test_rule_needles_are_listed() {
        let content = ["content_rule1", "content_rule2", "content_rule3", "content_rule4"];
        let discard = [
            "overall_discarded_content_rule1",
            "overall_discarded_content_rule2",
            "removed_comments_rule1",
            "discarded_image_rule1",
            "discarded_teaser_rule1",
        ];
        let rules = [
            (include_str!("content.rs"), &content[..]),
            (include_str!("content.rs"), &["content_rule5"][..]),
            (include_str!("discard.rs"), &discard[..]),
        ];
        let mut seen = 0;
        for (source, functions) in rules {
            for function in functions {
                let start = source.find(&format!("\nfn {function}(")).expect(function);
                let length = source[start..].find("\n}\n").expect(function);
                for literal in source[start..start + length].split('"').skip(1).step_by(2) {
                    seen += 1;
                    assert!(
                        RULE_NEEDLES.contains(&literal)
                            || RULE_NAMES.contains(&literal)
                            || literal.contains('{'),
                        "{function}: {literal:?} is in neither RULE_NEEDLES nor RULE_NAMES"
                    );
                }
            }
        }
        assert!(seen > 150, "{seen}");
    }
}
