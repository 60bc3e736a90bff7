//! What can go wrong in an emulated run, split into what the user can fix (exit code 2 in the
//! CLI: not root, no TUN device, no network namespaces, a scenario key the emulator cannot
//! honour) and failures of the machine or of the run itself (exit code 1).

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    #[error("the emu backend needs root (network namespaces and TUN devices); run it as root or with CAP_NET_ADMIN and CAP_SYS_ADMIN")]
    NotRoot,
    #[error("cannot open /dev/net/tun ({0}); load the tun module (modprobe tun) or give the container the device")]
    NoTun(io::Error),
    #[error("cannot create a network namespace ({0}); the kernel or the container does not allow unshare(CLONE_NEWNET)")]
    NoNetns(io::Error),
    #[error("{key} = {value}: the emu backend cannot honour it: {why}")]
    Unsupported {
        key: String,
        value: String,
        why: String,
    },
    #[error("setting up the emulated network ({what}): {source}")]
    Setup {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("the link emulator stopped: {0}")]
    Emulator(String),
    #[error("flow {flow}: {what}: {source}")]
    App {
        flow: String,
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("interrupted")]
    Interrupted,
    #[error("writing captures: {0}")]
    Capture(io::Error),
}

impl EmuError {
    /// Whether the user can fix this (wrong privileges, missing device, a bad scenario key).
    pub fn user_fixable(&self) -> bool {
        matches!(
            self,
            EmuError::NotRoot
                | EmuError::NoTun(_)
                | EmuError::NoNetns(_)
                | EmuError::Unsupported { .. }
        )
    }

    pub(crate) fn setup(what: impl Into<String>) -> impl FnOnce(io::Error) -> EmuError {
        let what = what.into();
        move |source| EmuError::Setup { what, source }
    }

    pub(crate) fn unsupported(
        key: impl Into<String>,
        value: impl std::fmt::Display,
        why: impl Into<String>,
    ) -> EmuError {
        EmuError::Unsupported {
            key: key.into(),
            value: value.to_string(),
            why: why.into(),
        }
    }
}
