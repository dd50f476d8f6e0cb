//! What the kernel holds for a connected socket, asked without waiting and
//! without taking anything: whether an idle keep-alive connection is still
//! quiet (nothing to read, not closed) before a request goes out on it.
//!
//! Not a reader: the bytes stay where they are. Works on the raw TCP
//! socket, so it serves a TLS connection too: `crate::net::stream` asks
//! rustls about the records it holds, then this about the socket under it.
use std::io;
use std::os::fd::AsRawFd;

/// True if the socket has no bytes waiting, no end of stream and no error:
/// an idle connection that may carry the next request. Anything else (the
/// server sent something unasked, closed, or reset) means the connection
/// is out of step and must not be reused.
pub(crate) fn is_quiet(socket: &impl AsRawFd) -> bool {
    let mut byte = 0u8;
    // SAFETY: recv(2) writes at most one byte into `byte`, which we own;
    // MSG_PEEK leaves the data in the socket, MSG_DONTWAIT never blocks.
    let n = unsafe {
        libc::recv(
            socket.as_raw_fd(),
            (&mut byte as *mut u8).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_socket_is_quiet_until_bytes_or_a_close_arrive() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        assert!(is_quiet(&client));
        server.write_all(b"x").unwrap();
        let waited = std::time::Instant::now();
        while is_quiet(&client) && waited.elapsed() < std::time::Duration::from_secs(5) {}
        assert!(!is_quiet(&client), "a waiting byte");
        assert!(!is_quiet(&client), "peeked, not taken");

        let closing = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        drop(accepted);
        let waited = std::time::Instant::now();
        while is_quiet(&closing) && waited.elapsed() < std::time::Duration::from_secs(5) {}
        assert!(!is_quiet(&closing), "closed by the peer");
    }
}
