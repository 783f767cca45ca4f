//! `crawl`: the binary. Everything it does is in the library (`crawl::main`), but for ending
//! the process at once, which only the binary may do: it passes `process::exit` in, for a
//! second Ctrl-C and for the stop watchdog (`schedule::stop`).

fn main() -> std::process::ExitCode {
    // Before any thread exists (see `sys::tune_allocator`).
    crawl::tune_allocator();
    crawl::main(std::process::exit)
}
