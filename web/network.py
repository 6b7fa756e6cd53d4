"""This machine's addresses on the network, found without sending anything.

``tiplu serve`` prints where phones can open the app, and the join page (:mod:`web.views`)
shows the same addresses; both ask here, so the page need not import the server.
"""

from __future__ import annotations

import ipaddress
import socket

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 without brackets) reaches only this machine.

    >>> is_loopback_host("localhost"), is_loopback_host("127.0.0.2"), is_loopback_host("192.168.1.5")
    (True, True, False)
    """
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def lan_addresses() -> list[str]:
    """This machine's non-loopback IPv4 addresses, found without sending a packet.

    Connecting a UDP socket only picks the outgoing interface; nothing is sent.
    """
    found: list[str] = []
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(str(info[4][0]))
    except OSError:
        pass
    for probe in ("10.255.255.255", "192.168.255.255", "172.31.255.255"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.connect((probe, 9))
                found.append(sock.getsockname()[0])
        except OSError:
            continue
    unique: list[str] = []
    for address in found:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            continue
        if not ip.is_loopback and not ip.is_unspecified and address not in unique:
            unique.append(address)
    return unique
