//! `crawl`: the binary. Everything it does is in the library (`crawl::main`).

fn main() -> std::process::ExitCode {
    // Before any thread exists (see `sys::tune_allocator`).
    crawl::tune_allocator();
    crawl::main()
}
