//! A loopback listener that serves each connection on its own thread until it is dropped: the
//! accept loop of the proxy and the TLS server.

use std::io;
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};

/// Serves connections on a free 127.0.0.1 port; dropping it stops accepting and raises the
/// stop flag the connection threads look at.
pub(crate) struct Listener {
    port: u16,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Listener {
    /// Starts accepting; `serve` runs on a thread of its own per connection, with the stop flag.
    pub(crate) fn start(
        serve: impl Fn(TcpStream, &AtomicBool) + Send + Sync + 'static,
    ) -> io::Result<Listener> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let serve = Arc::new(serve);
        let accept = thread::spawn(move || {
            for stream in listener.incoming() {
                if flag.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                let (serve, flag) = (Arc::clone(&serve), Arc::clone(&flag));
                thread::spawn(move || serve(stream, &flag));
            }
        });
        Ok(Listener {
            port,
            stop,
            accept: Some(accept),
        })
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accept thread, which then sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}
