//! glommio's I/O errors as the [`io::Error`] they carry: a failed read,
//! write, sync or open says what the system said ("No space left on
//! device (os error 28)"), and the message around it names the file once,
//! in words. glommio's own text adds the operation's name, the path as a
//! Rust debug string and the file descriptor, which say nothing more to a
//! person.
//!
//! Not the messages themselves (each caller says what it was doing to
//! which file), and not errors that are not glommio's.

use std::io;

use glommio::GlommioError;

/// The system's error inside `e`, or `e` as glommio converts it when it
/// holds none.
pub(crate) fn plain<T>(e: GlommioError<T>) -> io::Error {
    match e {
        GlommioError::IoError(source) | GlommioError::EnhancedIoError { source, .. } => source,
        other => io::Error::from(other),
    }
}

/// `e` in words: of an error glommio made into an [`io::Error`] from one
/// of its own (through a stream's `AsyncWrite`: its text then ends in
/// `, op: OP path: PATH with fd: FD`), the system's part only.
pub(crate) fn words(e: &io::Error) -> String {
    let text = e.to_string();
    let system = text
        .find(", op: ")
        .filter(|&at| {
            text.get(at..)
                .is_some_and(|rest| rest.contains(" with fd: "))
        })
        .and_then(|at| text.get(..at));
    match system {
        Some(system) => system.to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_reads_as_the_system_says_it_without_glommios_op_path_and_fd() {
        let e: GlommioError<()> = GlommioError::EnhancedIoError {
            source: io::Error::from_raw_os_error(28),
            op: "Writing",
            path: Some("/state/shard-0/journal-000000.bin".into()),
            fd: Some(21),
        };
        let converted = io::Error::from(GlommioError::<()>::EnhancedIoError {
            source: io::Error::from_raw_os_error(28),
            op: "Writing",
            path: None,
            fd: Some(3),
        });
        let plain = plain(e);
        assert_eq!(plain.raw_os_error(), Some(28));
        assert_eq!(plain.to_string(), "No space left on device (os error 28)");
        assert_eq!(words(&plain), "No space left on device (os error 28)");
        assert_eq!(words(&converted), "No space left on device (os error 28)");
        let other = io::Error::other("a, op: b");
        assert_eq!(words(&other), "a, op: b", "not glommio's: as it is");
    }
}
