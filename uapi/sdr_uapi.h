/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * sdr: software-defined reliability over RDMA UD - the /dev/sdr contract.
 *
 * An open /dev/sdr is a context.  SDR_IOC_BIND binds it to one RDMA device
 * and port; then it holds flows.  A flow is one end of a point-to-point
 * message channel: create it, give its endpoint blob to the peer out of
 * band, connect it with the peer's blob, then post sends and receives.
 *
 * Memory.  The kernel allocates, per flow, a receive region (max_msgs slots
 * of slot_stride bytes), a send region of the same shape, and a state area
 * (one struct sdr_recv_state plus its bitmaps per receive slot); per context
 * a completion ring.  The process maps each with mmap(2) at the offset the
 * kernel returned (offsets are opaque cookies: never compute them) and the
 * size it returned; any other offset or size fails with EINVAL, and a
 * mapping of another context's object is impossible (the cookie is looked
 * up in the calling context only).  The receive region and the state area
 * are read-only (PROT_WRITE or a later mprotect to writable fails with
 * EACCES); the send region and the completion ring are writable.  Of the
 * ring the kernel reads only the head index, and masks it.
 *
 * Ordering.  The kernel copies a packet's bytes into the receive slot and
 * only then sets the packet's bit and, when the chunk is whole, the chunk's
 * bit, each with release semantics (smp_mb__before_atomic + set_bit).  A
 * reader that loads a bitmap word with acquire semantics (libsdr does) sees
 * the bytes of every chunk whose bit it sees.  imm and msg_len in a struct
 * sdr_recv_state are valid once SDR_RECV_F_STARTED is seen (acquire) in
 * flags.  The ring's tail is stored with release after the entry is
 * written; the process loads tail with acquire and stores head with release
 * once it has consumed entries.  A slot's state is stored with release
 * after its status; load state with acquire before reading status.
 *
 * poll(2)/epoll on the fd: readable (EPOLLIN) while the completion ring
 * holds entries; EPOLLERR | EPOLLHUP once the bound device is gone; an
 * unbound context reports EPOLLERR.
 *
 * Completions come in the order work finishes, not the order it was
 * posted: a message with holes may complete after a later whole one.
 *
 * Every ioctl argument starts with __u32 size, __u32 flags; the ioctl
 * numbers do not encode the size (as in iommufd), so structs can grow.  The kernel
 * accepts any size from the first published size of the struct (SDR_*_SIZE_V1)
 * upward; bytes past the size it knows must be zero, and it writes back no
 * more than size bytes.  SDR_*_SIZE_V1 is a number, the size of version 1
 * of its struct, and never changes when the struct grows (as
 * OPEN_HOW_SIZE_VER0 of openat2): fields added later go after it.
 * Common errors of every ioctl:
 *   EFAULT      the argument is not readable or writable memory
 *   EINVAL      size smaller than SDR_*_SIZE_V1, or a __reserved field is
 *               not zero, or a value out of range (each ioctl lists them)
 *   E2BIG       bytes beyond the struct the kernel knows are not zero
 *   EOPNOTSUPP  a flag the kernel does not know
 *   ENOTTY      unknown ioctl number
 *   EBADFD      the context is not bound yet (all but SDR_IOC_BIND and
 *               SDR_IOC_QUERY)
 *   ENODEV      the bound RDMA device was removed; only close() is left
 *   EIO         the bound device broke (its queue pair could not be
 *               recovered after a transport error): every flow failed,
 *               poll() reports EPOLLERR; only FLOW_INFO and FLOW_DESTROY
 *               still work, until the device is removed
 *   ENOENT      flow_id names no flow of this context (also when another
 *               thread destroyed it during the call)
 */
#ifndef _UAPI_SDR_H
#define _UAPI_SDR_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define SDR_ABI_VERSION		9
#define SDR_IOC_MAGIC		0xD5

/*
 * Reliability policies.  Ids below SDR_POLICY_NR are defined; a kernel
 * runs some of them (SDR_IOC_QUERY: policies).  Flow create and
 * SDR_IOC_FLOW_MODIFY answer EINVAL for an id from SDR_POLICY_NR on and
 * EOPNOTSUPP for a defined id the kernel does not run.
 */
#define SDR_POLICY_NONE		0	/* raw bitmap: holes stay holes */
#define SDR_POLICY_SR		1	/* selective repeat */
#define SDR_POLICY_EC		2	/* erasure coding, SR fallback */
#define SDR_POLICY_ADAPTIVE	3	/* SR with timers learned per flow */
#define SDR_POLICY_AUTO		4	/* the kernel picks SR, EC or ADAPTIVE per message */
#define SDR_POLICY_NR		5	/* ids below this are defined: others EINVAL */
#define SDR_POLICY_DEFAULT	0xffffffffU	/* flow create: the module's default_policy */

/*
 * The policies' names by id, in one place: the words the kernel's sysfs
 * (flows/<id>/policy) shows and takes, and libsdr's names.  An
 * initializer:  static const char * const n[SDR_POLICY_NR] = SDR_POLICY_NAMES;
 */
#define SDR_POLICY_NAMES {				\
	[SDR_POLICY_NONE]	= "none",		\
	[SDR_POLICY_SR]		= "sr",			\
	[SDR_POLICY_EC]		= "ec",			\
	[SDR_POLICY_ADAPTIVE]	= "adaptive",		\
	[SDR_POLICY_AUTO]	= "auto",		\
}

#define SDR_GID_LEN		16
#define SDR_DEVNAME_LEN		64

/*
 * SDR_IOC_BIND - bind the context to a device and port.
 * flags: SDR_BIND_BY_GID: find the device and port by gid[] instead of
 *        ibdev[].
 * in:  ibdev (NUL-terminated name) or gid; port (0: the first RoCE port);
 *      cq_entries (completion ring entries, a power of two 64..65536,
 *      0 for 4096).
 * out: ibdev, port, gid, mtu (IB MTU in bytes), cq_entries, the ring's
 *      mmap offset and size, and the offsets inside that mapping.
 * errors: EBUSY already bound; ENODEV no such bound device (or no device
 *      with that GID), or one the caller's network namespace does not
 *      reach (ib_core's exclusive netns mode); EINVAL cq_entries not a power of two in range, name
 *      not NUL-terminated; ENOMEM no memory for the ring, or it would
 *      pass the opener's limits (as flow create's ENOMEM).
 */
#define SDR_BIND_BY_GID		(1U << 0)

struct sdr_ring_offsets {
	__u32 head;		/* __u32 consumer index, written by the process */
	__u32 tail;		/* __u32 producer index, written by the kernel */
	__u32 mask;		/* __u32 entries - 1 */
	__u32 overflow;		/* __u32 count of completions lost (never, by design) */
	__u32 cqes;		/* first struct sdr_cqe */
	__u32 __reserved;
};

struct sdr_bind {
	__u32 size;
	__u32 flags;
	__u8  ibdev[SDR_DEVNAME_LEN];
	__u8  gid[SDR_GID_LEN];
	__u32 port;
	__u32 mtu;
	__u32 cq_entries;
	__u32 __reserved;
	__aligned_u64 ring_offset;	/* mmap offset of the completion ring */
	__aligned_u64 ring_size;	/* bytes to map */
	struct sdr_ring_offsets ring;
};
#define SDR_BIND_SIZE_V1	144

/* One completion.  32 bytes. */
#define SDR_CQE_SEND		1
#define SDR_CQE_RECV		2
#define SDR_CQE_GROUP		3	/* a closed group's members all completed */

#define SDR_STATUS_OK		0	/* all bytes delivered / sent */
#define SDR_STATUS_PARTIAL	1	/* recv: completed with holes (NONE) */
/*
 * A send's completion comes only once the device holds none of its
 * packets: its memory is the process's again, whatever the status.  A
 * send completes FAILED, the flow going on, when the receiving process
 * discarded the receive (SDR_IOC_RECV_COMPLETE before it completed).
 */
#define SDR_STATUS_FAILED	2	/* peer dead, flow closed or reset */
#define SDR_STATUS_FLUSHED	3	/* flow destroyed or device removed */
/*
 * (since ABI 6) recv: the message is longer than the registered memory
 * its receive named (SDR_RECV_MR's mr_len); none of it landed, and the
 * sender's send completes FAILED (as for a discarded receive).
 */
#define SDR_STATUS_TOOBIG	4

/*
 * A group's entry (SDR_CQE_GROUP, SDR_IOC_GROUP): user_data as given at
 * open, flow_id 0, seq the group id, slot its members, imm how many of
 * them completed other than OK, len 0, status the highest member status
 * (OK < PARTIAL < FAILED < FLUSHED; OK for a group without members).
 */
struct sdr_cqe {
	__aligned_u64 user_data;	/* as given at post time */
	__u32 flow_id;
	__u32 seq;		/* message sequence number (the post's handle) */
	__u32 slot;		/* recv: slot index; send: 0 */
	__u32 len;		/* recv: message length; send: bytes sent */
	__u32 imm;		/* recv: the message's immediate */
	__u8  type;		/* SDR_CQE_* */
	__u8  status;		/* SDR_STATUS_* */
	__u16 __reserved;
};

/*
 * The endpoint blob: everything the peer needs to connect.  Exchange it
 * out of band as bytes; all fields are little-endian.  It is the flow's
 * credential: token is a random number every packet to this flow must
 * carry (packets without it are dropped as bad_token), and seq0 the
 * random sequence number of the flow's first message.  none_window is
 * how many NONE packets the flow lets its peer have on the way (receive
 * credits, Documentation/protocol.rst), 16..16384.  Give it only to the
 * peer.
 */
#define SDR_EP_MAGIC		0x31524453	/* "SDR1" */

/*
 * A flow's paths: the number of UD QPs of its device its packets spread
 * over (SDR_IOC_QUERY: paths_max; SDR_IOC_FLOW_CREATE: paths).  The NIC
 * gives each QP its own UDP source port, so ECMP sees each path as a
 * flow of its own.  qpn[0] is the endpoint's qpn (which also receives);
 * qpn[1..n-1] the device's other QPs, which only send.  Give it to the
 * peer with the endpoint (SDR_IOC_FLOW_CONNECT's peer_paths): a receiver
 * drops packets of the flow from any QPN the peer did not give it.  Like
 * the endpoint, n and qpn are little-endian.
 */
#define SDR_PATHS_MAX		8

struct sdr_ep_paths {
	__u32 n;		/* 1..SDR_PATHS_MAX */
	__u32 __reserved;
	__u32 qpn[SDR_PATHS_MAX];	/* qpn[0..n-1] */
};

/*
 * Packet authentication (Documentation/protocol.rst, "Authentication").
 * A flow that authenticates tags every packet it sends and numbers it for
 * the peer's replay window; it drops packets to it whose tag is wrong
 * (bad_tag) or whose number it saw already or is too old to tell
 * (replay).  No key is ever sent: each flow makes a fresh X25519 key
 * pair at SDR_IOC_FLOW_CREATE and gives its public half to the peer with
 * the endpoint (struct sdr_ep_kex); both ends derive one key per
 * direction (HKDF-SHA256) from the X25519 secret, both shares and, when
 * the flow names one, the job's secret, which also signs each share, so
 * a host without the job secret can neither connect nor tag a packet,
 * and a host that saw the connect learns nothing that tags one.
 *   SDR_AUTH_DEFAULT  in only: the module parameter auth (vmac64 unless
 *                     the administrator changed it)
 *   SDR_AUTH_OFF      no tags: for trusted fabrics
 *   SDR_AUTH_VMAC64   VMAC-64 with AES-128 (the kernel's vmac64(aes)),
 *                     8-byte tag, the packet number as nonce
 *   SDR_AUTH_AEAD     (ABI 9) ChaCha20-Poly1305 (RFC 8439): every
 *                     payload encrypted, header and payload
 *                     authenticated, 16-byte tag, the packet number as
 *                     nonce
 */
#define SDR_AUTH_DEFAULT	0
#define SDR_AUTH_OFF		1
#define SDR_AUTH_VMAC64		2
#define SDR_AUTH_AEAD		3
#define SDR_AUTH_NR		4
/* their names, as sysfs (flows/<id>/auth, the module parameter auth) says */
#define SDR_AUTH_NAMES		{ "default", "off", "vmac64", "aead" }

#define SDR_AUTH_KEY_LEN	16

/*
 * Little-endian, like the endpoint.  Since ABI 9 no key travels: key is
 * all zero (a connect that gives one fails with EPROTO) and the flow's
 * share is struct sdr_ep_kex.
 */
struct sdr_ep_auth {
	__u32 alg;		/* SDR_AUTH_OFF, SDR_AUTH_VMAC64 or _AEAD */
	__u32 __reserved;	/* 0 */
	__u8  key[SDR_AUTH_KEY_LEN];	/* 0 */
};

/*
 * A flow's key-exchange share (ABI 9), given to the peer with the
 * endpoint: the flow's auth, its X25519 public key and, when the flow
 * names a job secret (SDR_KEX_F_PSK), the first 16 bytes of
 * HMAC-SHA256 under that secret over the endpoint, the paths and the
 * share (Documentation/protocol.rst, "Key exchange").  All zero but alg
 * for SDR_AUTH_OFF.  The job secret is a user key "sdr:NAME" in the
 * creating process's keyrings (keyctl add user sdr:NAME ...), 16 to
 * 4096 bytes; it never leaves the kernel.
 */
#define SDR_KEX_PUB_LEN		32
#define SDR_KEX_MAC_LEN		16
#define SDR_KEX_F_PSK		(1U << 0)	/* mac proves the job secret */
#define SDR_SECRET_NAME_LEN	48		/* NAME, with its NUL */

struct sdr_ep_kex {
	__u32 alg;		/* the flow's auth: SDR_AUTH_* */
	__u32 flags;		/* SDR_KEX_F_* */
	__u8  pub[SDR_KEX_PUB_LEN];
	__u8  mac[SDR_KEX_MAC_LEN];
};

/*
 * What a connected flow's keys rest on (sysfs flows/<id>/kex):
 *   SDR_KEX_NONE       SDR_AUTH_OFF: no keys
 *   SDR_KEX_EPHEMERAL  X25519 alone: safe from a sniffer, not from a host
 *                      that answers the connect in the peer's place
 *   SDR_KEX_PSK        X25519 and the job secret: only a holder of the
 *                      secret is the peer
 */
#define SDR_KEX_NONE		0
#define SDR_KEX_EPHEMERAL	1
#define SDR_KEX_PSK		2
#define SDR_KEX_NAMES		{ "none", "ephemeral", "psk" }

struct sdr_endpoint {
	__u32 magic;
	__u32 abi;		/* SDR_ABI_VERSION */
	__u8  gid[SDR_GID_LEN];
	__u32 qpn;
	__u32 qkey;
	__u32 flow_id;
	__u32 policy;
	__u32 payload;		/* message bytes per packet */
	__u32 chunk_size;
	__u32 max_msg_size;
	__u32 max_msgs;
	__u32 token_lo;		/* random, per flow */
	__u32 token_hi;
	__u32 seq0;		/* sequence number of the first message */
	__u32 none_window;	/* NONE packets the flow takes in flight */
};

/*
 * SDR_IOC_FLOW_CREATE - create a flow.
 * in:  policy (one this kernel runs, SDR_IOC_QUERY: NONE, SR, EC,
 *      ADAPTIVE and AUTO in this version; or SDR_POLICY_DEFAULT for the
 *      module parameter default_policy); mtu
 *      (0: the port's; else 256..4096, a power of two, at most the
 *      port's); chunk_size (bytes per bitmap bit, 64 up to 1024
 *      packets' payload; 0: the module parameter chunk_pkts packets, 16
 *      unless changed: a chunk's bit is set once every byte of it landed,
 *      so a chunk that is not a multiple of payload waits for the packets
 *      it shares with its neighbours, since ABI 6); max_msg_size
 *      (1..1 GiB); max_msgs (1..1024); flags: SDR_FLOW_CREATE_MR (since
 *      ABI 6) makes a flow of registered memory only: no receive or send
 *      region is allocated, charged or mapped (recv_size and send_size
 *      are 0), its receives must name registered memory (SDR_RECV_MR) and
 *      its sends registered memory or a user pointer; max_inflight (since
 *      ABI 6, in the version 4 struct): the most packets SR, EC and
 *      ADAPTIVE keep in flight, whatever window the path allows (0 or
 *      above it: the module parameter max_inflight, read when a policy
 *      starts; answered as set);
 *      ec_k and ec_m (since struct version 2): the EC geometry of the
 *      flow's EC messages, data and parity packets per submessage
 *      (1..SDR_IOC_QUERY's ec_max_k and ec_max_m; 0: the module
 *      parameters ec_k and ec_m), kept whatever the policy, so a switch
 *      to EC uses it (AUTO's EC messages take the geometry AUTO picks);
 *      SDR_IOC_FLOW_MODIFY changes it; paths (since struct version 3):
 *      how many of its device's QPs the flow's packets spread over,
 *      1..SDR_IOC_QUERY's paths_max (0: 1).  Policies SR, EC and
 *      ADAPTIVE (and AUTO's choices of them) use them all, watching each
 *      path's loss and round trip (Documentation/protocol.rst, "Paths");
 *      NONE sends on the first; auth (since struct version 4): packet
 *      authentication, SDR_AUTH_* (a caller of an earlier version gets
 *      SDR_AUTH_DEFAULT's, and its connect must then give the peer's
 *      struct sdr_ep_auth with a version 3 connect).
 * out: flow_id, payload (message bytes per packet = mtu - header), the
 *      actual policy, chunk_size, mtu, ec_k and ec_m, paths, auth, the
 *      endpoint, ep_paths and ep_auth to give the peer, and the layout of
 *      the three mappings.
 * errors: EINVAL an attribute out of range (policy from SDR_POLICY_NR on,
 *      auth from SDR_AUTH_NR on, chunk_size below 64 or above 1024
 *      packets), a flag not defined;
 *      EPERM auth SDR_AUTH_OFF while the module parameter auth_required
 *      is set and the caller lacks CAP_NET_ADMIN; EOPNOTSUPP a defined
 *      policy this kernel does not run; ENOENT the kernel has no
 *      vmac64(aes) transform (module vmac); ENOSPC
 *      the completion ring cannot hold 2 * max_msgs more completions
 *      (bind with more cq_entries); ENOMEM the regions could not be
 *      allocated (the regions, max_msgs * max_msg_size each, and the
 *      state area, whose bitmaps grow as chunk_size shrinks, are limited
 *      by the module parameter max_region_mb), or would pass the opener's
 *      RLIMIT_MEMLOCK (unless it has CAP_IPC_LOCK), its memory cgroup's
 *      limit, or the bytes an open file or a user may map (module
 *      parameters ctx_max_mb, user_max_mb); EMFILE the file or its user
 *      holds as many flows as allowed (ctx_max_flows, user_max_flows).
 */
#define SDR_FLOW_CREATE_MR	(1U << 0)	/* no regions: registered memory */

struct sdr_flow_create {
	__u32 size;
	__u32 flags;
	__u32 policy;
	__u32 mtu;
	__u32 chunk_size;
	__u32 max_msg_size;
	__u32 max_msgs;
	__u32 flow_id;		/* out */
	__u32 payload;		/* out */
	__u32 __reserved;
	struct sdr_endpoint ep;	/* out */
	/* receive region: slot i at recv_offset + i * slot_stride */
	__aligned_u64 recv_offset;
	__aligned_u64 recv_size;
	/* send region: same shape; sends name an offset inside it */
	__aligned_u64 send_offset;
	__aligned_u64 send_size;
	/* state area: slot i's struct sdr_recv_state at i * state_stride */
	__aligned_u64 state_offset;
	__aligned_u64 state_size;
	__u32 slot_stride;
	__u32 state_stride;
	__u32 chunk_bitmap;	/* offset of the chunk bitmap in a slot state */
	__u32 pkt_bitmap;	/* offset of the packet bitmap in a slot state */
	/* version 2 */
	__u32 ec_k;		/* in/out: EC data packets per submessage */
	__u32 ec_m;		/* in/out: EC parity packets per submessage */
	/* version 3 */
	__u32 paths;		/* in/out: QPs the flow sends over */
	__u32 __reserved3;
	struct sdr_ep_paths ep_paths;	/* out */
	/* version 4 */
	__u32 auth;		/* in/out: SDR_AUTH_* */
	__u32 max_inflight;	/* in/out: packets in flight, at most (ABI 6) */
	struct sdr_ep_auth ep_auth;	/* out */
	/* version 5 (ABI 9) */
	char  secret[SDR_SECRET_NAME_LEN];	/* in: NAME of "sdr:NAME", or "" */
	struct sdr_ep_kex ep_kex;	/* out */
};
#define SDR_FLOW_CREATE_SIZE_V1	176
#define SDR_FLOW_CREATE_SIZE_V2	184
#define SDR_FLOW_CREATE_SIZE_V3	232
#define SDR_FLOW_CREATE_SIZE_V4	264
#define SDR_FLOW_CREATE_SIZE_V5	368

/*
 * The state of one receive slot, in the state area (read-only to the
 * process).  Bitmaps are arrays of __u64, bit i of the array is bit (i % 64)
 * of word i / 64.  The message lands dst_off bytes into the receive's
 * buffer (0 unless its sender chose another, SDR_IOC_SEND_POST): the
 * packet bitmap counts the message's packets from its first byte, the
 * chunk bitmap the receive's chunks from the buffer's first byte, so the
 * message's chunks are bits dst_off / chunk_size up to that plus chunks.
 */
#define SDR_RECV_FREE		0	/* no receive posted */
#define SDR_RECV_POSTED		1	/* posted, no packet yet */
#define SDR_RECV_ACTIVE		2	/* packets arriving */
#define SDR_RECV_DONE		3	/* completion posted (see status) */

#define SDR_RECV_F_STARTED	(1U << 0)	/* imm and msg_len valid */
/*
 * (ABI 8) a stream of parts (SDR_SEND_PARTS): parts land where each
 * says; chunk bits only (no packet bits); msg_len, packets and chunks
 * are set when it completes (0 until then).
 */
#define SDR_RECV_F_STREAM	(1U << 1)

struct sdr_recv_state {
	__u32 seq;		/* message sequence number of the posted receive */
	__u32 gen;		/* incremented at every post of this slot */
	__u32 state;		/* SDR_RECV_* */
	__u32 flags;		/* SDR_RECV_F_* */
	__u32 imm;
	__u32 msg_len;
	__u32 chunks;		/* chunks in the message (valid once started) */
	__u32 packets;		/* packets in the message (valid once started) */
	__u32 chunks_done;	/* chunk bits set */
	__u32 packets_done;	/* packet bits set */
	__u32 status;		/* SDR_STATUS_*, valid in SDR_RECV_DONE */
	__u32 dst_off;		/* where the message lands (valid once started) */
	__u32 __reserved[4];
};

/*
 * SDR_IOC_FLOW_CONNECT - give the flow its peer.
 * The peer's policy is informative: each message carries its own.
 * peer_paths (since struct version 2): the QPNs the peer's packets come
 * from, its SDR_IOC_FLOW_CREATE ep_paths; n 0 (or version 1): only the
 * endpoint's qpn.  Else qpn[0] is the endpoint's, and every qpn is
 * nonzero, below 2^24 and different from the others.  peer_auth (since
 * struct version 3): the peer's SDR_IOC_FLOW_CREATE ep_auth; its alg must
 * be this flow's auth (a version 2 caller's, all zero, is taken as
 * SDR_AUTH_OFF).
 * errors: EISCONN already connected; EPROTO the peer's authentication is
 *      not this flow's (alg differs, a key for OFF, or an all-zero key, or
 *      reserved bits set); EINVAL bad magic or ABI, payload,
 *      chunk_size, max_msg_size or max_msgs differ from this flow's, a
 *      zero or out-of-range flow id or QPN; EHOSTUNREACH the address
 *      handle for the peer's GID cannot be created (no route).  A peer
 *      that is routable but absent is only found by traffic: policy SR or EC
 *      fails the flow after the dead-peer time (module parameter
 *      dead_ms).
 */
struct sdr_flow_connect {
	__u32 size;
	__u32 flags;
	__u32 flow_id;
	__u32 __reserved;
	struct sdr_endpoint peer;
	/* version 2 */
	struct sdr_ep_paths peer_paths;
	/* version 3 */
	struct sdr_ep_auth peer_auth;
	/* version 4 (ABI 9) */
	struct sdr_ep_kex peer_kex;
};
#define SDR_FLOW_CONNECT_SIZE_V1	88
#define SDR_FLOW_CONNECT_SIZE_V2	128
#define SDR_FLOW_CONNECT_SIZE_V3	152
#define SDR_FLOW_CONNECT_SIZE_V4	208

/*
 * SDR_IOC_FLOW_DESTROY - destroy a flow: outstanding sends and receives
 * complete with SDR_STATUS_FLUSHED, the peer is told (best effort), the
 * mappings stay valid until munmap but are no longer written.  The flow's
 * count and its other memory are given back at once; its regions stay
 * charged (RLIMIT_MEMLOCK, ctx_max_mb, user_max_mb) until their last
 * mapping is gone, so destroying needs no munmap first and cannot fail
 * for a mapping (the pages live as long as it does).
 */
struct sdr_flow_destroy {
	__u32 size;
	__u32 flags;
	__u32 flow_id;
	__u32 __reserved;
};
#define SDR_FLOW_DESTROY_SIZE_V1	16

/*
 * SDR_IOC_FLOW_INFO - query a flow.
 * out: state (SDR_FLOW_*), policy, peer flow id, counters, EC geometry
 *      (ec_k, ec_m).
 */
#define SDR_FLOW_IDLE		0	/* created, not connected */
#define SDR_FLOW_CONNECTED	1
#define SDR_FLOW_CLOSED		2	/* peer closed it */
#define SDR_FLOW_FAILED		3	/* peer dead */

struct sdr_flow_info {
	__u32 size;
	__u32 flags;
	__u32 flow_id;
	__u32 state;
	__u32 policy;
	__u32 peer_flow_id;
	__u32 sends_inflight;
	__u32 recvs_posted;
	__aligned_u64 tx_packets;
	__aligned_u64 tx_bytes;
	__aligned_u64 rx_packets;
	__aligned_u64 rx_bytes;
	__aligned_u64 rx_dropped;
	__aligned_u64 retransmits;
	__aligned_u64 parity_sent;	/* EC parity packets sent */
	__aligned_u64 recovered;	/* packets rebuilt from parity */
	__u32 ec_k;			/* EC geometry of messages posted now */
	__u32 ec_m;			/* (0 from kernels before it) */
	/* retransmissions the original made useless (0 from older kernels) */
	__aligned_u64 spurious_retx;
};
#define SDR_FLOW_INFO_SIZE_V1	112

/*
 * SDR_IOC_RECV_POST - post a receive.  Receives match messages in order:
 * the n-th receive posted on a flow takes the n-th message the peer sends.
 * flags: SDR_RECV_GROUP (since version 2): the receive joins group
 *      @group (SDR_IOC_GROUP); without it group must be 0.
 *      SDR_RECV_MR (since version 3, ABI 6): the message lands in
 *      registered memory (SDR_IOC_MR_REG) instead of the slot of the
 *      receive region: at mr_addr, a virtual address inside region mr_id,
 *      at most mr_len bytes (1..max_msg_size; a longer message completes
 *      SDR_STATUS_TOOBIG).  Its bitmap and state stay in the state area.
 *      The registration cannot be removed while the receive holds it
 *      (until SDR_IOC_RECV_COMPLETE); without the flag, mr_id, mr_addr
 *      and mr_len must be 0, and the flow must have a receive region
 *      (not created SDR_FLOW_CREATE_MR: else EINVAL).
 * out: slot (index into the receive region and state area), seq (the
 *      message sequence number it will hold; the handle), gen.
 * errors: ENOTCONN flow not connected; EAGAIN all max_msgs slots are in
 *      use or the completion ring is full; EPIPE the flow is closed or
 *      failed; EINVAL a group without SDR_RECV_GROUP; ENOENT the group
 *      is not open (never opened, closed already, or completed), or
 *      mr_id names no registration of this context; EFAULT
 *      [mr_addr, mr_addr + mr_len) is not inside it; EINVAL mr_len 0 or
 *      above max_msg_size, MR fields without SDR_RECV_MR.
 */
#define SDR_RECV_GROUP		(1U << 0)
#define SDR_RECV_MR		(1U << 1)

struct sdr_recv_post {
	__u32 size;
	__u32 flags;
	__u32 flow_id;
	__u32 slot;		/* out */
	__u32 seq;		/* out */
	__u32 gen;		/* out */
	__aligned_u64 user_data;
	__u32 group;		/* SDR_RECV_GROUP: the group it joins */
	__u32 mr_id;		/* SDR_RECV_MR: the registration (version 3) */
	__aligned_u64 mr_addr;	/* SDR_RECV_MR: where the message lands */
	__aligned_u64 mr_len;	/* SDR_RECV_MR: the most it may hold */
};
#define SDR_RECV_POST_SIZE_V1	32
#define SDR_RECV_POST_SIZE_V2	40
#define SDR_RECV_POST_SIZE_V3	56

/*
 * SDR_IOC_RECV_COMPLETE - give a receive slot back.  Allowed in any state
 * after the post: a message still arriving is abandoned (its late packets
 * are dropped as stale; no completion is produced for it afterwards), and
 * under SR and EC its sender is told (ABORT): its send completes
 * SDR_STATUS_FAILED, not OK, and the flow goes on.
 * errors: EINVAL slot out of range; ESTALE slot does not hold seq (already
 *      completed, or never posted).
 */
struct sdr_recv_complete {
	__u32 size;
	__u32 flags;
	__u32 flow_id;
	__u32 slot;
	__u32 seq;
	__u32 __reserved;
};
#define SDR_RECV_COMPLETE_SIZE_V1	24

/*
 * SDR_IOC_SEND_POST - send a message, or a part of a streamed one.
 * flags (at most one of the stream flags):
 *   SDR_SEND_USER_PTR      addr is a pointer in the process, not an
 *                          offset in the send region; the bytes are
 *                          copied before the ioctl returns.
 *   SDR_SEND_STREAM_START  start message seq (out) of msg_len bytes, of
 *                          which the first len are ready now.
 *   SDR_SEND_STREAM_CONT   len more bytes of message seq (in) are ready;
 *                          addr is where those bytes start.
 *   SDR_SEND_STREAM_END    as CONT, and these are the last bytes.
 *   SDR_SEND_GROUP         the message joins group @group (SDR_IOC_GROUP);
 *                          one-shot and STREAM_START only.  Without it
 *                          group must be 0.
 *   SDR_SEND_MR            (since version 2, ABI 6) addr is a virtual
 *                          address inside registered memory mr_id
 *                          (SDR_IOC_MR_REG), msg_len bytes of it (len for
 *                          a one-shot); the bytes are sent from there, not
 *                          copied, and must not change until the send
 *                          completes, nor can the registration be
 *                          removed before.  Every part of a stream names
 *                          the same mr_id; without the flag mr_id is 0.
 *   SDR_SEND_PARTS         (ABI 8) with a stream flag: a stream of parts
 *                          whose total is known only at its end (the SDR
 *                          SDK's streamed send).  START opens it (len,
 *                          msg_len, addr and dst_off 0; seq out); each
 *                          CONT adds a part of len bytes (1 and up) from
 *                          addr, each from the source its own flags name
 *                          (region, USER_PTR, or MR with its own mr_id),
 *                          landing at its own dst_off (a multiple of
 *                          chunk_size, the part within max_msg_size), in
 *                          any order; END (len 0) ends it.  Each part
 *                          starts a packet: a stream holds at most twice
 *                          the packets of a max_msg_size message (ENOSPC
 *                          past that).  It runs SR (ADAPTIVE on an
 *                          ADAPTIVE flow): EOPNOTSUPP on a NONE flow.
 * dst_off (ABI 7): where the message lands in the receive it matches, in
 * bytes: a multiple of the flow's chunk_size, with dst_off + the message
 * length at most max_msg_size; 0 is the buffer's start.  A receive whose
 * buffer ends before dst_off + the length takes nothing of the message:
 * it completes SDR_STATUS_TOOBIG and the send fails.  One-shot and
 * STREAM_START only (CONT and END: 0).
 * Without stream flags: one-shot, msg_len is ignored and len is the
 * message length.  A streamed message always ends with STREAM_END, which
 * may carry len 0 when START or CONT already made every byte ready;
 * START may carry len 0 (nothing ready yet).  Ready lengths other than
 * the last must be multiples of the flow's payload.  Region data must not
 * change until the send completes.  Under SR and EC the sender waits for
 * the next part as long as it takes, but a receiver that got part of a
 * message and then nothing from the peer for the dead-peer time (module
 * parameter dead_ms) fails the flow: do not pause a stream that long.
 * A NONE message goes out only once the peer posted its receive, and
 * within the peer's window (receive credits): until then it waits, and its
 * completion with it, however long the peer takes to post.
 * errors: ENOTCONN flow not connected; EAGAIN max_msgs sends in flight or
 *      completion ring full; EINVAL len 0 or above max_msg_size, a range
 *      outside the send region, dst_off not a multiple of chunk_size or
 *      past max_msg_size with the message, dst_off on CONT or END, a
 *      stream part not aligned or beyond
 *      msg_len, END before msg_len bytes, two stream flags; ESTALE seq
 *      names no open stream of this flow; EBUSY another part of this
 *      stream is being copied in by another thread (post one part at a
 *      time); EPIPE flow closed or failed;
 *      EFAULT a user pointer that cannot be read, or an SDR_SEND_MR
 *      range outside its registration; ENOENT mr_id names no
 *      registration of this context; ENOMEM no memory for
 *      the message's state (SR, EC: about 18 bytes a packet) or its EC
 *      parity (m/k of the message, module parameters ec_k and ec_m).
 *      What a send makes the kernel hold (a copy of a USER_PTR message
 *      or part, a stream of parts' table, that state and parity) is
 *      charged like the regions (RLIMIT_MEMLOCK, ctx_max_mb,
 *      user_max_mb, the memory cgroup) within the module parameter
 *      flow_send_max_mb a flow, until the send is freed: past a limit
 *      the post fails EAGAIN while the flow's earlier sends hold some
 *      (it clears as they complete), else ENOMEM; nothing is kept.
 */
#define SDR_SEND_USER_PTR	(1U << 0)
#define SDR_SEND_STREAM_START	(1U << 1)
#define SDR_SEND_STREAM_CONT	(1U << 2)
#define SDR_SEND_STREAM_END	(1U << 3)
#define SDR_SEND_GROUP		(1U << 4)
#define SDR_SEND_MR		(1U << 5)
#define SDR_SEND_PARTS		(1U << 6)

struct sdr_send_post {
	__u32 size;
	__u32 flags;
	__u32 flow_id;
	__u32 imm;
	__aligned_u64 addr;	/* send-region offset, or pointer */
	__aligned_u64 len;
	__aligned_u64 msg_len;	/* STREAM_START only */
	__aligned_u64 user_data;
	__u32 seq;		/* out (one-shot, START); in (CONT, END) */
	__u32 group;		/* SDR_SEND_GROUP: the group it joins; else 0 */
	__u32 mr_id;		/* SDR_SEND_MR: the registration (version 2) */
	__u32 dst_off;		/* where it lands in the receive (ABI 7) */
};
#define SDR_SEND_POST_SIZE_V1	56
#define SDR_SEND_POST_SIZE_V2	64

/*
 * SDR_IOC_FLOW_MODIFY - change a live flow.  Each change applies to
 * messages posted from now on (each message carries its policy and EC
 * geometry; the receiver follows them per message), so nothing in
 * flight is lost or changed.
 * flags (any of them): SDR_FLOW_MODIFY_POLICY: the policy;
 *        SDR_FLOW_MODIFY_EC: the EC geometry, ec_k and ec_m (struct
 *        version 2), as in SDR_IOC_FLOW_CREATE but 0 is not allowed;
 *        SDR_FLOW_MODIFY_RATE (struct version 3): rate_mbit, the rate
 *        SR, EC (and ADAPTIVE, as its ceiling) send at, in Mbit/s of sdr
 *        packets (payload and its 64-byte header; the link's own headers
 *        are not counted), for a dedicated link; 0: the path's,
 *        measured (Documentation/protocol.rst, "Window and rate").  The
 *        window still comes from the path.  Applies at once, to every
 *        message.  A new flow takes the module parameter rate_mbit.
 * errors: EINVAL no flag, policy from SDR_POLICY_NR on, ec_k or ec_m out
 *        of range, SDR_FLOW_MODIFY_EC with a version 1 struct,
 *        SDR_FLOW_MODIFY_RATE with a version 1 or 2 struct or a rate
 *        above SDR_RATE_MAX_MBIT, or __reserved not 0; EOPNOTSUPP a
 *        defined policy this kernel does not run.  Nothing changes when
 *        an error is returned.
 */
#define SDR_FLOW_MODIFY_POLICY	(1U << 0)
#define SDR_FLOW_MODIFY_EC	(1U << 1)
#define SDR_FLOW_MODIFY_RATE	(1U << 2)

#define SDR_RATE_MAX_MBIT	1000000		/* 1 Tbit/s */

struct sdr_flow_modify {
	__u32 size;
	__u32 flags;
	__u32 flow_id;
	__u32 policy;
	/* version 2 */
	__u32 ec_k;
	__u32 ec_m;
	/* version 3 */
	__u32 rate_mbit;
	__u32 __reserved;
};
#define SDR_FLOW_MODIFY_SIZE_V1	16
#define SDR_FLOW_MODIFY_SIZE_V2	24
#define SDR_FLOW_MODIFY_SIZE_V3	32

/*
 * SDR_IOC_QUERY - what this kernel offers.  Works on any context: before
 * SDR_IOC_BIND, and after its device was removed or broke.
 * out: abi_version (SDR_ABI_VERSION); policy_nr (its SDR_POLICY_NR: ids
 *      below are defined); policies (bit SDR_POLICY_x, 1ULL << x, set iff
 *      it runs policy x: flow create and FLOW_MODIFY take exactly those);
 *      features (SDR_FEATURE_*); the largest EC code (ec_max_k data and
 *      ec_max_m parity packets per submessage: the ranges of the module
 *      parameters ec_k and ec_m); the largest max_msg_size and max_msgs
 *      flow create takes; paths_max (since ABI 3's multipath), the
 *      most paths a flow may take (module parameter dev_paths, read when
 *      the device was bound: a bound context answers for its device).
 *      __reserved is zero in and out.
 * errors: only the common ones.
 */
#define SDR_FEATURE_AUTH	(1ULL << 0)	/* authenticated packets: SDR_AUTH_* */
#define SDR_FEATURE_MULTIPATH	(1ULL << 1)	/* a flow over several QPs (paths) */
#define SDR_FEATURE_RAILS	(1ULL << 2)	/* a flow over several devices */
#define SDR_FEATURE_GROUPS	(1ULL << 3)	/* groups: SDR_IOC_GROUP */
#define SDR_FEATURE_MR		(1ULL << 4)	/* registered memory: SDR_IOC_MR_* */
#define SDR_FEATURE_KEX		(1ULL << 5)	/* keys from a key exchange (ABI 9) */
#define SDR_FEATURE_AEAD	(1ULL << 6)	/* SDR_AUTH_AEAD (ABI 9) */

struct sdr_query {
	__u32 size;
	__u32 flags;
	__u32 abi_version;	/* out */
	__u32 policy_nr;	/* out */
	__aligned_u64 policies;	/* out: 1ULL << SDR_POLICY_x per policy run */
	__aligned_u64 features;	/* out: SDR_FEATURE_* */
	__u32 ec_max_k;		/* out */
	__u32 ec_max_m;		/* out */
	__u32 max_msg_size;	/* out */
	__u32 max_msgs;		/* out */
	__u32 paths_max;	/* out */
	__u32 __reserved0;
	__aligned_u64 __reserved[3];
};
#define SDR_QUERY_SIZE_V1	80

/*
 * SDR_IOC_FLOW_RAIL - spread a flow over more devices (rails).
 * A flow starts on its context's device, rail 0.  Before it connects, it
 * may take up to SDR_RAILS_MAX - 1 more bound devices (ops below), each
 * with paths of its own; the flow's paths are then rail 0's, then rail
 * 1's, and so on (SDR_PATHS_MAX in all).  Policies SR, EC and ADAPTIVE
 * (and AUTO's choices of them) send over every rail's paths, watching
 * each path's loss and round trip; NONE sends on rail 0 only; control
 * packets (ACKs, NACKs, credits) go over rail 0.  Whatever rail a packet
 * took, the receive bitmap puts it in place.  Rail r of one end talks to
 * rail r of the other: the ends add the same number of rails, exchange
 * every rail's ep and ep_paths with the flow's endpoint, connect each
 * rail, then connect the flow.  A rail's device removed while the flow
 * runs takes that rail's paths down and the flow goes on over the
 * others (what was in flight on it is sent again); removing rail 0's
 * device ends the flow, as without rails.
 * op SDR_RAIL_ADD: in: flow_id, rail 0, ibdev (a bound device, not the flow's
 *      nor one of its rails, whose port MTU is at least the flow's),
 *      paths (0: 1; at most the device's paths_max and what is left of
 *      SDR_PATHS_MAX).  out: rail (its index, 1..), paths, ep (the
 *      rail's endpoint: its gid, qpn and the flow's id on that device;
 *      the rest as the flow's) and ep_paths (its QPNs).
 * op SDR_RAIL_CONNECT: in: flow_id, rail, ep and ep_paths: the peer's
 *      ADD output for the same rail; paths 0 and ibdev empty.
 * errors: EISCONN the flow is already connected (or the rail is);
 *      ENODEV no such device, or it is going away; EINVAL a bad op,
 *      rail, paths or endpoint (magic, ABI, payload, chunk_size,
 *      max_msg_size or max_msgs unlike the flow's, a zero or
 *      out-of-range flow id or QPN), the flow's own device or one it
 *      already has, an MTU below the flow's; ENOSPC SDR_RAILS_MAX rails
 *      already; EHOSTUNREACH no address handle for the peer's GID.
 *      SDR_IOC_FLOW_CONNECT fails with EINVAL while a rail is not
 *      connected, or when a rail's peer endpoint carries another token,
 *      policy geometry or flow than the flow's peer.
 */
#define SDR_RAILS_MAX		4
#define SDR_RAIL_ADD		0
#define SDR_RAIL_CONNECT	1

struct sdr_flow_rail {
	__u32 size;
	__u32 flags;
	__u32 flow_id;
	__u32 op;		/* SDR_RAIL_* */
	__u32 rail;		/* ADD: out; CONNECT: in */
	__u32 paths;		/* ADD: in/out */
	__u8  ibdev[SDR_DEVNAME_LEN];	/* ADD: in */
	struct sdr_endpoint ep;		/* ADD: out; CONNECT: in, the peer's */
	struct sdr_ep_paths ep_paths;	/* ADD: out; CONNECT: in, the peer's */
};
#define SDR_FLOW_RAIL_SIZE_V1	200

/*
 * SDR_IOC_GROUP - groups of a context's sends and receives: one
 * collective step, say, whose messages the application waits for
 * together.  A group is open from SDR_GROUP_OPEN until SDR_GROUP_CLOSE;
 * while open, sends (SDR_SEND_GROUP) and receives (SDR_RECV_GROUP) of any
 * of the context's flows join it at post.  Once it is closed and every
 * member has its completion in the ring, the group's own completion
 * (SDR_CQE_GROUP) follows them.  A member a process abandons (a receive
 * given back before it completed) counts as completed FAILED.
 *
 * Recovery goes to the oldest group first: the sends and receives of the
 * context's oldest group not yet completed (by open order) are urgent.
 * An urgent send's resends go out twice (the copy on another path when
 * the flow has more than one) and ahead of other flows' packets on the
 * device; its EC parity goes ahead too.  A grouped receive NACKs a tail
 * that stays silent (the sender's timeout, the slower way to learn of a
 * lost tail, is left as the last resort), whatever the flow's policy.
 *
 * op SDR_GROUP_OPEN: in user_data (returned in the group's completion);
 *      out group, an id that is not 0 and names no other group of the
 *      context still open or completing.  It holds one completion ring
 *      entry until its completion is consumed.
 *      errors: EAGAIN the completion ring is full, or SDR_GROUPS_MAX
 *      groups are open or completing.
 * op SDR_GROUP_CLOSE: in group.  No more members join it.
 *      errors: ENOENT it is not open (never opened, or closed already).
 * Fields an op does not take (OPEN's group, CLOSE's user_data) must be 0,
 * and op one of these: else EINVAL.
 */
#define SDR_GROUPS_MAX		256
#define SDR_GROUP_OPEN		0
#define SDR_GROUP_CLOSE		1

struct sdr_group {
	__u32 size;
	__u32 flags;
	__u32 op;		/* SDR_GROUP_* */
	__u32 group;		/* OPEN: out; CLOSE: in */
	__aligned_u64 user_data;	/* OPEN: in */
};
#define SDR_GROUP_SIZE_V1	24

/*
 * SDR_IOC_MR_REG - register application memory (since ABI 6): receives
 * land in it (SDR_RECV_MR) and sends go from it (SDR_SEND_MR) with no
 * copy in the process.  [addr, addr + len) is any range of the process's
 * writable memory; its pages are pinned (long-term, as ib_umem pins
 * them) until the registration is removed or the context closed, and are
 * charged, like the regions, to RLIMIT_MEMLOCK (unless CAP_IPC_LOCK) and
 * to sdr's limits per context and per user (module parameters
 * ctx_max_mb, user_max_mb), and counted in ctx_max_mrs.
 * in:  addr, len (1 .. 2^40); flags 0.
 * out: mr_id, the registration's name in this context (never 0).
 * errors: EINVAL len 0 or above SDR_MR_LEN_MAX, or addr + len wraps;
 *      EFAULT a page of the range is not mapped or not writable; ENOMEM
 *      over RLIMIT_MEMLOCK or sdr's limits, or no memory; EMFILE the
 *      context has ctx_max_mrs registrations already.
 *
 * SDR_IOC_MR_DEREG - remove registration mr_id: its pages are unpinned
 * and uncharged before the call returns.
 * errors: ENOENT no such registration; EBUSY a posted receive or a send
 *      in flight uses it (complete them first).
 */
struct sdr_mr_reg {
	__u32 size;
	__u32 flags;
	__aligned_u64 addr;
	__aligned_u64 len;
	__u32 mr_id;		/* out */
	__u32 __reserved;
};
#define SDR_MR_REG_SIZE_V1	32
#define SDR_MR_LEN_MAX		(1ULL << 40)

struct sdr_mr_dereg {
	__u32 size;
	__u32 flags;
	__u32 mr_id;
	__u32 __reserved;
};
#define SDR_MR_DEREG_SIZE_V1	16

/*
 * SDR_IOC_KEX_CHECK (ABI 9) - whether a peer's share is signed with the
 * job secret "sdr:NAME" of the caller's keyrings, without a flow: a
 * server that answers connection requests refuses strangers before it
 * makes anything for them.  Works on an unbound file too.
 * in:  secret (NAME, as in SDR_IOC_FLOW_CREATE), the peer's endpoint,
 *      paths and share as it would connect with them; flags 0.
 * errors: EKEYREJECTED the share is not signed, or not with this
 *      secret; EINVAL no secret named, a bad name or paths; ENOKEY,
 *      EKEYREVOKED, EKEYEXPIRED, EACCES the keyring's answer.
 */
struct sdr_kex_check {
	__u32 size;
	__u32 flags;
	char  secret[SDR_SECRET_NAME_LEN];
	struct sdr_endpoint peer;
	struct sdr_ep_paths peer_paths;
	struct sdr_ep_kex peer_kex;
};
#define SDR_KEX_CHECK_SIZE_V1	224

#define SDR_IOC_BIND		_IO(SDR_IOC_MAGIC, 0x00)
#define SDR_IOC_FLOW_CREATE	_IO(SDR_IOC_MAGIC, 0x01)
#define SDR_IOC_FLOW_CONNECT	_IO(SDR_IOC_MAGIC, 0x02)
#define SDR_IOC_FLOW_DESTROY	_IO(SDR_IOC_MAGIC, 0x03)
#define SDR_IOC_FLOW_INFO	_IO(SDR_IOC_MAGIC, 0x04)
#define SDR_IOC_RECV_POST	_IO(SDR_IOC_MAGIC, 0x05)
#define SDR_IOC_RECV_COMPLETE	_IO(SDR_IOC_MAGIC, 0x06)
#define SDR_IOC_SEND_POST	_IO(SDR_IOC_MAGIC, 0x07)
#define SDR_IOC_FLOW_MODIFY	_IO(SDR_IOC_MAGIC, 0x08)
#define SDR_IOC_QUERY		_IO(SDR_IOC_MAGIC, 0x09)
#define SDR_IOC_FLOW_RAIL	_IO(SDR_IOC_MAGIC, 0x0a)
#define SDR_IOC_GROUP		_IO(SDR_IOC_MAGIC, 0x0b)
#define SDR_IOC_MR_REG		_IO(SDR_IOC_MAGIC, 0x0c)
#define SDR_IOC_MR_DEREG	_IO(SDR_IOC_MAGIC, 0x0d)
#define SDR_IOC_KEX_CHECK	_IO(SDR_IOC_MAGIC, 0x0e)

#endif /* _UAPI_SDR_H */
