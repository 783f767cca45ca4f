//! The few platform calls the crawler makes, in one place: allocator tuning, the process's own
//! memory and I/O counters from `/proc`, the memory available, the open-file limit (and its
//! raise), the early write-back of a growing archive file, the look at an idle kept connection
//! before it is reused, arrival timestamps, and the self-kill of the crash tests. Every libc
//! call is here, each `unsafe` block with its SAFETY note; the few other `unsafe` blocks (SIMD
//! and one hand-over of a socket) are listed in ARCHITECTURE.md, "Invariants".

/// Keeps resident memory flat over a long crawl (glibc; "Flat memory" in BENCHMARKS.md). By
/// default glibc gives threads up to 8 arenas per core, and every arena keeps its own high-water
/// mark of freed memory it cannot return, so with 64 workers resident memory grew with the length
/// of the crawl (19 MiB at 10^4 pages, 42 at 10^6) while live heap stayed near 12 MB. Two arenas
/// share that slack. Must run before any thread starts.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes an allocator parameter; the caller runs before any thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Returns memory the allocator holds but no longer uses to the operating system. A merge has
/// just freed its large buffers; without this, glibc keeps freed pages in its per-thread arenas
/// and resident memory creeps up over a long crawl although live data stays flat (measured with
/// heaptrack: 11.6 MB peak heap against 51 MiB RSS at 10^5 pages).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it is safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The process's soft limit on open files (`RLIMIT_NOFILE`), when there is one: idle
/// connections are kept within a share of it (`fetch::pool`).
pub fn open_files_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct we own, and reads nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// Raises the soft limit on open files (`RLIMIT_NOFILE`) to the hard limit, so that the crawl
/// may keep as many connections as the system lets this process have; returns the soft limit
/// now in force (`None` when it cannot be read, or is unlimited). A failure to raise it leaves
/// the old limit, which the defaults then follow.
pub fn raise_open_files_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct we own, and reads nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0
        && limit.rlim_cur < limit.rlim_max
    {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads one rlimit from the struct we own; raising the soft limit up
        // to the hard one needs no privilege and changes nothing but this process's limit.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) };
    }
    open_files_limit()
}

/// Memory the system can give without swapping (Linux `MemAvailable`), in bytes, if known.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Kills this process with SIGKILL, which cannot be caught: a crash test's simulated power cut.
pub fn kill_self() {
    // SAFETY: sending a signal to our own process; no memory is shared with the kernel.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
}

/// Peak resident set size of this process in bytes (Linux `VmHWM`), if known.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Bytes this process has passed to write(2) so far (Linux `wchar`: files, pipes and terminals).
pub fn bytes_written() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
}

/// What an idle socket holds, seen without reading it and without waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Idle {
    /// Nothing to read: the peer sent nothing and has not closed.
    Quiet,
    /// The peer closed its side (or reset the connection).
    Closed,
    /// Bytes wait to be read.
    Bytes,
}

/// Looks at a socket without reading from it and without blocking: one
/// `recv(MSG_PEEK | MSG_DONTWAIT)` of one byte. A kept connection is reused only when `Quiet`
/// (`fetch::pool`).
pub fn peek_idle(socket: &impl std::os::fd::AsRawFd) -> Idle {
    let mut byte = 0u8;
    loop {
        // SAFETY: recv writes at most 1 byte into `byte`, which we own and which outlives the call;
        // MSG_PEEK leaves the byte in the socket and MSG_DONTWAIT makes the call return at once
        // whatever the socket's blocking mode. The descriptor is borrowed from a live socket.
        let n = unsafe {
            libc::recv(
                socket.as_raw_fd(),
                (&raw mut byte).cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        return match n {
            0 => Idle::Closed,
            n if n > 0 => Idle::Bytes,
            _ => match std::io::Error::last_os_error().kind() {
                std::io::ErrorKind::WouldBlock => Idle::Quiet,
                std::io::ErrorKind::Interrupted => continue,
                // Reset, or any other error: the connection is not fit for a request.
                _ => Idle::Closed,
            },
        };
    }
}

/// Starts the kernel writing `len` bytes of `file` from `offset` to disk, without waiting for
/// it (`sync_file_range(SYNC_FILE_RANGE_WRITE)`): a file written this way as it grows leaves its
/// closing fsync only its last bytes to wait for, instead of everything written since it was
/// opened. Only a hint: the fsync that follows is what makes the bytes durable, so a failure
/// here (or another system, where it does nothing) changes no outcome.
pub fn start_writeback(file: &std::fs::File, offset: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: sync_file_range only reads the descriptor, borrowed from a live file, and
        // two integers; it touches no memory of ours.
        unsafe {
            libc::sync_file_range(
                file.as_raw_fd(),
                offset as libc::off64_t,
                len as libc::off64_t,
                libc::SYNC_FILE_RANGE_WRITE,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
}

/// Asks the kernel to stamp each packet the socket receives with its arrival time
/// (`SO_TIMESTAMPNS`), which `recv_stamped` returns: a response's time is then the server's and
/// the network's, not also the wait of a busy machine before the worker ran to read it.
/// Linux turns stamping on for the machine a moment after the first socket asks (a deferred
/// work item): packets before that come unstamped, and the callers fall back to their own read.
pub fn stamp_arrivals(socket: &impl std::os::fd::AsRawFd) {
    #[cfg(target_os = "linux")]
    {
        let on: libc::c_int = 1;
        // SAFETY: setsockopt reads `size_of::<c_int>()` bytes from `on`, which outlives the call;
        // the descriptor is borrowed from a live socket. A failure only leaves arrivals unstamped.
        unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_TIMESTAMPNS,
                (&raw const on).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = socket;
}

/// A `read` of a socket into `buf` (one `recvmsg`), with the arrival time of the last packet it
/// read when the socket stamps arrivals (`stamp_arrivals`), else None.
#[cfg(target_os = "linux")]
pub fn recv_stamped(
    socket: &impl std::os::fd::AsRawFd,
    buf: &mut [u8],
) -> std::io::Result<(usize, Option<std::time::SystemTime>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // Room for one SCM_TIMESTAMPNS message (a cmsghdr and a timespec), 8-byte aligned.
    let mut control = [0u64; 8];
    // SAFETY: an all-zero msghdr is valid (null pointers, zero lengths); its pointers are set
    // below to `iov` and `control`, which outlive the recvmsg call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: recvmsg writes at most `buf.len()` bytes into `buf` (through `iov`) and at most
    // `msg_controllen` bytes into `control`; the descriptor is borrowed from a live socket.
    let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &raw mut msg, 0) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: the CMSG_* macros walk the control messages recvmsg wrote into `control`, within
    // the `msg_controllen` it set; the timespec is read unaligned from its message's data.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
            {
                let at: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                stamp = std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(
                    at.tv_sec as u64,
                    at.tv_nsec as u32,
                ));
            }
            cmsg = libc::CMSG_NXTHDR(&raw const msg, cmsg);
        }
    }
    Ok((n as usize, stamp))
}
