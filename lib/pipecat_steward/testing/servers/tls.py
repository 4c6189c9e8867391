"""A throwaway self-signed TLS certificate for 127.0.0.1, made at run time.

Uses the `cryptography` package when it is installed (google-auth, which the Google
clients need, depends on it); falls back to the `openssl` command otherwise.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import subprocess
from pathlib import Path

_HOST = "127.0.0.1"


def make_self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """Write `cert.pem` and `key.pem` for 127.0.0.1 into `directory`; return their paths.

    Raises:
        RuntimeError: Neither `cryptography` nor the `openssl` command is available.

    """
    cert, key = directory / "cert.pem", directory / "key.pem"
    try:
        _with_cryptography(cert, key)
    except ImportError:
        _with_openssl(cert, key)
    return cert, key


def _with_cryptography(cert_path: Path, key_path: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, _HOST)])
    now = datetime.datetime.now(datetime.UTC)
    san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(_HOST))])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(san, critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    encryption = serialization.NoEncryption()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )
    key_path.write_bytes(pem)


def _with_openssl(cert_path: Path, key_path: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("a TLS fake needs the `cryptography` package or the `openssl` command")
    command = [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
    command += ["-nodes", "-keyout", str(key_path), "-out", str(cert_path), "-days", "1"]
    command += ["-subj", f"/CN={_HOST}", "-addext", f"subjectAltName=IP:{_HOST}"]
    subprocess.run(command, check=True, capture_output=True)
