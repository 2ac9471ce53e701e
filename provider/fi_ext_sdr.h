/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * fi_ext_sdr.h: the libfabric provider sdr's own endpoint options
 * (fi_sdr(7)), for fi_setopt() and fi_getopt() at level FI_OPT_ENDPOINT.
 * Each value is a uint32_t.
 *
 * FI_OPT_SDR_POLICY   the reliability policy of the flows an FI_EP_RDM
 *                     endpoint creates: FI_SDR_POLICY_SR (the default),
 *                     _EC, _ADAPTIVE or _AUTO (sdr's SDR_POLICY_* ids).
 *                     Before fi_enable() only.  (FI_EP_DGRAM: NONE, not
 *                     settable.)
 * FI_OPT_SDR_EC_K,    EC's data and parity packets per submessage of
 * FI_OPT_SDR_EC_M     those flows (EC, and AUTO when it picks EC): 1 to
 *                     the module's ec_max_k / ec_max_m (sdrctl caps), 0
 *                     the module's ec_k / ec_m.  Before fi_enable() only.
 * FI_OPT_SDR_GROUP    1: open an sdr group that the endpoint's sends from
 *                     now on join (all their parts, to any peer; one open
 *                     before closes it), whose recovery goes first while
 *                     it is the oldest not yet complete (a collective
 *                     step); 0: close it.  fi_getopt(): the open group's
 *                     id, 0 if none.  After fi_enable().
 * FI_OPT_SDR_MAX_PEERS the most connections the endpoint accepts from
 *                     peers (default 64); a request over it is refused.
 *                     Before fi_enable() only.
 * FI_OPT_SDR_IDLE_MS  a connection with no traffic and nothing
 *                     outstanding this long (ms; default 60000, 0 never)
 *                     is reclaimed, and connects anew when next used.
 *                     Before fi_enable() only.
 * FI_OPT_SDR_PEERS,   fi_getopt() only: the accepted connections the
 * FI_OPT_SDR_REFUSED, endpoint holds, the requests it refused over
 * FI_OPT_SDR_RECLAIMED FI_OPT_SDR_MAX_PEERS, the connections it
 *                     reclaimed (idle, or failed), since fi_enable().
 *
 * The environment sets the first three, and the limits, for every
 * endpoint a process opens: FI_SDR_POLICY (sr, ec, adaptive, auto),
 * FI_SDR_EC_K, FI_SDR_EC_M, FI_SDR_MAX_PEERS, FI_SDR_IDLE_MS.
 */
#ifndef FI_EXT_SDR_H
#define FI_EXT_SDR_H

#include <rdma/fabric.h>

#define FI_PROV_SPECIFIC_SDR	(0x5d7 << 16)

enum {
	FI_OPT_SDR_POLICY = -FI_PROV_SPECIFIC_SDR,
	FI_OPT_SDR_EC_K,
	FI_OPT_SDR_EC_M,
	FI_OPT_SDR_GROUP,
	FI_OPT_SDR_MAX_PEERS,
	FI_OPT_SDR_IDLE_MS,
	FI_OPT_SDR_PEERS,
	FI_OPT_SDR_REFUSED,
	FI_OPT_SDR_RECLAIMED,
};

#define FI_SDR_POLICY_SR	1
#define FI_SDR_POLICY_EC	2
#define FI_SDR_POLICY_ADAPTIVE	3
#define FI_SDR_POLICY_AUTO	4

#endif /* FI_EXT_SDR_H */
