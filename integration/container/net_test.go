package container

import "net/netip"

// loopback is where the tests publish ports: 127.0.0.1 only.
var loopback = netip.MustParseAddr("127.0.0.1")
