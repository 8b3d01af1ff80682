package syslogd

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// kernelDrops reads how many datagrams the kernel discarded for the UDP
// socket because its receive buffer was full (Linux: the "drops" column of
// /proc/net/udp and /proc/net/udp6, found by the socket's inode). Elsewhere
// it reports nothing.
type kernelDrops struct {
	inode string
	last  int64
}

func newKernelDrops(conn *net.UDPConn) *kernelDrops {
	k := &kernelDrops{}
	if conn == nil {
		return k
	}
	sc, err := conn.SyscallConn()
	if err != nil {
		return k
	}
	_ = sc.Control(func(fd uintptr) {
		link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		if err != nil {
			return
		}
		// "socket:[12345]"
		if rest, ok := strings.CutPrefix(link, "socket:["); ok {
			k.inode = strings.TrimSuffix(rest, "]")
		}
	})
	k.last = k.read()
	return k
}

// delta returns the drops since the previous call.
func (k *kernelDrops) delta() int64 {
	if k.inode == "" {
		return 0
	}
	n := k.read()
	d := n - k.last
	if d < 0 {
		d = 0
	}
	k.last = max(n, k.last)
	return d
}

func (k *kernelDrops) read() int64 {
	if k.inode == "" {
		return 0
	}
	for _, name := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		if n, ok := dropsOf(name, k.inode); ok {
			return n
		}
	}
	return 0
}

// dropsOf finds the socket with inode in a /proc/net/udp table.
func dropsOf(name, inode string) (int64, bool) {
	f, err := os.Open(name)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
		if len(fields) < 13 || fields[9] != inode {
			continue
		}
		n, err := strconv.ParseInt(fields[12], 10, 64)
		return n, err == nil
	}
	return 0, false
}
