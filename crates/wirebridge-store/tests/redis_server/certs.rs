//! Certificates made at test time with the `openssl` command: a CA, a server
//! certificate it signed for 127.0.0.1, a client certificate it signed, and
//! an unrelated CA that signed nothing here.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// PEM files in a directory of their own.
pub struct Certificates {
    dir: PathBuf,
}

impl Certificates {
    /// Makes them in `dir` (created if needed).
    pub fn generate(dir: &Path) -> Self {
        fs::create_dir_all(dir).expect("create the certificate directory");
        let certificates = Self {
            dir: dir.to_owned(),
        };
        for ca in ["ca", "other-ca"] {
            certificates.openssl(&[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN=wirebridge test {ca}"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.crt"),
            ]);
        }
        certificates.sign(
            "server",
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
        );
        certificates.sign("client", "extendedKeyUsage=clientAuth\n");
        certificates
    }

    /// A key and a certificate for `name`, signed by the CA.
    fn sign(&self, name: &str, extensions: &str) {
        fs::write(self.dir.join(format!("{name}.ext")), extensions).expect("write extensions");
        self.openssl(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            &format!("/CN=wirebridge test {name}"),
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.csr"),
        ]);
        self.openssl(&[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &format!("{name}.ext"),
            "-out",
            &format!("{name}.crt"),
        ]);
    }

    fn openssl(&self, args: &[&str]) {
        let output = Command::new("openssl")
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run openssl ({e}): install it with `apt-get install -y openssl`")
            });
        assert!(
            output.status.success(),
            "openssl {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The path of `file` (`ca.crt`, `server.key`, …).
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    /// The contents of `file`.
    pub fn pem(&self, file: &str) -> Vec<u8> {
        fs::read(self.path(file)).unwrap_or_else(|e| panic!("read {file}: {e}"))
    }
}
