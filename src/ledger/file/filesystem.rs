//! Refusing network filesystems: on NFS, SMB and the like `flock` may be
//! emulated per host or not at all, and `O_APPEND` is not atomic across
//! clients, so two writers could both reserve one turn.

use super::failpoint;
use std::fs::File;
use std::io;

/// `statfs` magic numbers (linux/magic.h) of filesystems where several
/// hosts share one file. FUSE is left out: it is as often local as not.
const NETWORK_FILESYSTEMS: &[(i64, &str)] = &[
    (0x6969, "nfs"),
    (0x517B, "smb"),
    (0xFF53_4D42, "cifs"),
    (0xFE53_4D42, "smb2"),
    (0x7375_7245, "coda"),
    (0x5346_414F, "afs"),
    (0x6B41_4653, "kafs"),
    (0x0102_1997, "9p"),
    (0x00C3_6400, "ceph"),
    (0x0BD0_0BD0, "lustre"),
    (0x0116_1970, "gfs2"),
    (0x7461_636F, "ocfs2"),
    (0x4750_4653, "gpfs"),
];

/// The name of a network filesystem for a `statfs` magic number.
pub(super) fn network_name(magic: i64) -> Option<&'static str> {
    NETWORK_FILESYSTEMS
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|(_, name)| *name)
}

/// The network filesystem `file` is on, if it is on one.
pub(super) fn network_fs_of(file: &File) -> io::Result<Option<String>> {
    if let Some(name) = failpoint::pretended_network_fs() {
        return Ok(Some(name));
    }
    let stat = rustix::fs::fstatfs(file)?;
    #[allow(clippy::unnecessary_cast)] // f_type's width differs by platform
    Ok(network_name(stat.f_type as i64).map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_nfs_and_smb_and_not_local_filesystems() {
        assert_eq!(network_name(0x6969), Some("nfs"));
        assert_eq!(network_name(0xFF53_4D42), Some("cifs"));
        assert_eq!(network_name(0xEF53), None); // ext4
        assert_eq!(network_name(0x0102_1994), None); // tmpfs
    }

    #[test]
    fn the_source_folder_is_on_a_local_filesystem() {
        let folder = File::open(env!("CARGO_MANIFEST_DIR")).unwrap();
        assert_eq!(network_fs_of(&folder).unwrap(), None);
    }
}
