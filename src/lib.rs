//! `crawl`: a polite, crash-safe web crawler with Mercator's disk-based duplicate-URL eliminator.
