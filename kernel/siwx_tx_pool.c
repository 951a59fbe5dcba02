// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The stage's page pool (docs/design.md): stage pages that TCP took by
 * reference, kept in the order they were filled, so that the oldest is
 * written again once TCP has let go of it instead of a new page, which
 * the page allocator zeroes, taking its place. A connection keeps at most
 * its send buffer's worth and tx_pool of them; all together at most
 * siwx_tx_pool_budget(), taken in chunks (SIWX_TX_POOL_CHUNK) so that the
 * send path touches nothing shared per page. A connection idle for
 * SIWX_TX_POOL_IDLE gives everything back.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "siwx_tx_pool.h"

static unsigned int siwx_tx_pool_max = SIWX_TX_POOL;
module_param_named(tx_pool, siwx_tx_pool_max, uint, 0644);
MODULE_PARM_DESC(tx_pool,
		 "Stage pages a connection keeps for reuse (0..1024)");

/* Budget a connection takes at a time: 256 KiB */
#define SIWX_TX_POOL_CHUNK 64U
/* A connection that kept or took no page for this long gives all back */
#define SIWX_TX_POOL_IDLE (2 * HZ)

/* At most 1/64 of memory and 64 MiB kept in all pools together */
static long siwx_tx_pool_budget(void)
{
	return min_t(long, totalram_pages() / 64, SZ_64M >> PAGE_SHIFT);
}

bool siwx_tx_pool_on(void)
{
	return READ_ONCE(siwx_tx_pool_max) != 0;
}

/* How many pages @conn may keep now */
static u32 siwx_tx_pool_cap(struct siwx_conn *conn)
{
	u32 cap = min_t(u32, READ_ONCE(siwx_tx_pool_max), SIWX_TX_POOL);
	struct socket *sock = conn->sock;

	if (!sock)
		return 0;
	return min_t(u32, cap,
		     DIV_ROUND_UP(READ_ONCE(sock->sk->sk_sndbuf), PAGE_SIZE));
}

static struct page *siwx_tx_pool_pop(struct siwx_tx_pool *pool)
{
	struct page *page = pool->ring[pool->head];

	pool->head = (pool->head + 1) % SIWX_TX_POOL;
	pool->n--;
	return page;
}

/* Let go of every page, the ring and the budget */
static void siwx_tx_pool_empty(struct siwx_tx_pool *pool)
{
	while (pool->n)
		put_page(siwx_tx_pool_pop(pool));
	kfree(pool->ring);
	pool->ring = NULL;
	pool->head = 0;
	atomic_long_sub(pool->budget, &siwx_objects.tx_pool_taken);
	/* read by the idle work without tx_mutex */
	WRITE_ONCE(pool->budget, 0);
}

/*
 * Room for one more page: the ring, and budget for it, taken in chunks.
 * The idle work holds a reference on the connection while it is queued.
 */
static bool siwx_tx_pool_room(struct siwx_conn *conn)
{
	struct siwx_tx_pool *pool = &conn->tx_pool;

	if (!pool->ring) {
		pool->ring = kcalloc(SIWX_TX_POOL, sizeof(*pool->ring),
				     GFP_KERNEL | __GFP_NOWARN);
		if (!pool->ring)
			return false;
	}
	if (pool->n < pool->budget)
		return true;
	if (atomic_long_add_return(SIWX_TX_POOL_CHUNK,
				   &siwx_objects.tx_pool_taken) >
	    siwx_tx_pool_budget()) {
		atomic_long_sub(SIWX_TX_POOL_CHUNK,
				&siwx_objects.tx_pool_taken);
		return false;
	}
	if (!pool->budget) {
		siwx_conn_get(conn);
		if (!queue_delayed_work(system_wq, &pool->idle,
					SIWX_TX_POOL_IDLE))
			siwx_conn_put(conn);
	}
	WRITE_ONCE(pool->budget, pool->budget + SIWX_TX_POOL_CHUNK);
	return true;
}

/* A stage page: the oldest kept if TCP has let go of it, else a new one */
struct page *siwx_tx_pool_get(struct siwx_conn *conn)
{
	struct siwx_tx_pool *pool = &conn->tx_pool;

	pool->used = jiffies;
	if (pool->n && page_ref_count(pool->ring[pool->head]) == 1) {
		siwx_copies_add(tx_stage_reused, 1);
		return siwx_tx_pool_pop(pool);
	}
	siwx_copies_add(tx_stage_new, 1);
	return alloc_page(GFP_KERNEL);
}

/* @page, filled and given to TCP, is ours no more until TCP lets go */
void siwx_tx_pool_put(struct siwx_conn *conn, struct page *page)
{
	struct siwx_tx_pool *pool = &conn->tx_pool;
	u32 cap = siwx_tx_pool_cap(conn);

	pool->used = jiffies;
	/* Full: the oldest goes, which TCP holds still if it holds any */
	while (pool->n && pool->n >= cap)
		put_page(siwx_tx_pool_pop(pool));
	if (!cap || !siwx_tx_pool_room(conn)) {
		put_page(page);
		return;
	}
	pool->ring[(pool->head + pool->n) % SIWX_TX_POOL] = page;
	pool->n++;
}

/*
 * Idle for SIWX_TX_POOL_IDLE: give everything back. The engine holding
 * tx_mutex means it is not idle; it may sleep there on a full socket,
 * so this work only tries the mutex.
 */
static void siwx_tx_pool_idle(struct work_struct *work)
{
	struct siwx_tx_pool *pool = container_of(to_delayed_work(work),
						 struct siwx_tx_pool, idle);
	struct siwx_conn *conn = container_of(pool, struct siwx_conn,
					      tx_pool);
	unsigned long delay = SIWX_TX_POOL_IDLE;

	if (mutex_trylock(&conn->tx_mutex)) {
		unsigned long idle_at = pool->used + SIWX_TX_POOL_IDLE;
		/* one reading, or the delay could wrap past idle_at */
		unsigned long now = jiffies;

		if (time_after_eq(now, idle_at))
			siwx_tx_pool_empty(pool);
		else
			delay = idle_at - now;
		mutex_unlock(&conn->tx_mutex);
	}
	/* Still holds budget: look again (the reference stays with it) */
	if (READ_ONCE(pool->budget) &&
	    queue_delayed_work(system_wq, &pool->idle, delay))
		return;
	siwx_conn_put(conn);
}

void siwx_tx_pool_init(struct siwx_conn *conn)
{
	INIT_DELAYED_WORK(&conn->tx_pool.idle, siwx_tx_pool_idle);
}

/* The engine has stopped for good: no idle work from now on */
void siwx_tx_pool_stop(struct siwx_conn *conn)
{
	if (cancel_delayed_work_sync(&conn->tx_pool.idle))
		siwx_conn_put(conn);
}

/* The connection is gone: TCP's references keep what its skbs need */
void siwx_tx_pool_release(struct siwx_conn *conn)
{
	siwx_tx_pool_empty(&conn->tx_pool);
}
