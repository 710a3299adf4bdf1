/*
 * snapshot_cell.pml -- the snapshot that a global dispatch walks without the registry's lock,
 * and how unpublished snapshots are reclaimed.
 *
 * Models (Sources/FluxCore/Internal):
 *   SnapshotCell.swift   read(orPublish:), leave, publish, reclaim, invalidate, takeRetired
 *   StoreRegistry.swift  register / unregister (invalidate, then change `stores`, under
 *                        `lock`; retired boxes released after it) and dispatch (a reader).
 *
 * Threads:
 *   Reader(reads)  global dispatches: count in, load the box (or publish one under the lock),
 *                  walk it, count out, reclaim if last out. With REENTRANT, the second reader's
 *                  first walk registers a store from inside the walk (a commit that creates a
 *                  store).
 *   Owner          registers store 1, registers store 2, unregisters store 1. With FOREVER
 *                  (the liveness variant) it alternately registers and unregisters store 2,
 *                  forever, and freed boxes are reused.
 *
 * Properties:
 *   - a reader never walks a freed box: a box is freed only with no reader holding it
 *     (assertions in freeBox and in the walk), and only once;
 *   - the box a reader takes is exactly the registered stores of that moment, and stays so for
 *     its whole walk: a store registered after (even from inside the walk) is not in it;
 *   - the published box is always alive and equal to the owner's elements (observer
 *     cellConsistent); invalidate frees it under the lock only when it is, so no element goes;
 *   - steady state: once the readers are done, nothing is retired and every box but the
 *     published one is freed (end of init); with an owner that never stops (FOREVER),
 *     `nothingRetiredForever`: after the readers stop, the retired list empties;
 *   - `readersFinish`: every read finishes, even against an owner that changes the registry
 *     forever (weak fairness, fair lock), and no deadlock (invalid end states).
 *
 * Abstracted away:
 *   - A store is a bit of `stores`; a box is an index into a pool, holding a copy of the bits.
 *     What a walk does with each element (StoreCore.dispatch) is the other model's business;
 *     here a walk is two steps, each of which must find its box alive.
 *   - Swift reference counts: a box is alive from its publication until released; ghost
 *     `holders` counts the readers that borrowed it, which must be none when it is freed
 *     (this catches a freed box even when the pool reuses its slot).
 *   - The lock is a mutex (lockOwner); in the FOREVER variant a FIFO hand-off lock, a fair one,
 *     so that a starving reader would be the protocol's fault, not the mutex's.
 *
 * Memory ordering: every operation on `readers`, `current` and `hasRetired` is sequentially
 * consistent in the Swift code, and the safety argument uses their single total order, which is
 * exactly what spin's interleaving semantics gives. Two store->load pairs need it: reader
 * `readers += 1` then load `current` / owner exchange `current` then load `readers` (no box is
 * freed under a reader), and the Dekker pair owner `hasRetired := true` then load `readers` /
 * reader `readers -= 1` then load `hasRetired` (no box left retired). Acquire/release alone
 * would allow both loads of a pair to miss the other's store; this model does not cover that.
 */

#define NBOX      6       /* box ids 1..5; 0 means "none published" */
#define UNUSED    0
#define LIVE      1
#define FREED     2

#ifdef FOREVER
#define REUSE     UNUSED  /* a freed slot may be published again */
#else
#define REUSE     FREED
#endif

byte lockOwner = 0;       /* the registry's lock */
#ifdef FOREVER
chan waiting = [4] of { byte };   /* threads waiting for the lock, in arrival order */
#endif

/* SnapshotCell */
byte readers = 0;         /* Atomic<Int>, seq_cst */
byte current = 0;         /* Atomic<UInt>, seq_cst: the published box */
bool hasRetired = false;  /* Atomic<Bool>, seq_cst */
byte retired = 0;         /* [Box], guarded by lock: bitmask of box ids */

/* StoreRegistry */
byte stores = 0;          /* guarded by lock: bitmask of registered store ids */

/* ghosts */
byte boxState[NBOX];
byte boxContent[NBOX];
byte holders[NBOX];       /* readers that loaded the box and have not counted out */
byte finished = 0;
bool readersDone = false;

#define bit(i) (1 << (i))

/* The published box is alive and is the owner's elements of the moment; a retired box is
 * alive; whoever holds retired boxes has hasRetired set (outside the locked sections). */
#define CELL_CONSISTENT \
  ((current == 0 || (boxState[current] == LIVE && boxContent[current] == stores)) && \
   (lockOwner != 0 || retired == 0 || hasRetired))

/* ---------------------------------------------------------------- lock */

#ifdef FOREVER
/* A fair (FIFO hand-off) mutex: unlock hands the lock to the longest waiter, whose guard
 * then stays enabled, so weak fairness lets it in. */
inline lock() {
  atomic {
    if
    :: lockOwner == 0 && len(waiting) == 0 -> lockOwner = _pid + 1
    :: else -> waiting!(_pid + 1)
    fi
  };
  lockOwner == _pid + 1
}
inline unlock() {
  atomic {
    assert(lockOwner == _pid + 1);
    if
    :: len(waiting) > 0 -> waiting?lockOwner
    :: else -> lockOwner = 0
    fi
  }
}
#else
inline lock() {
  assert(lockOwner != _pid + 1);
  atomic { lockOwner == 0 -> lockOwner = _pid + 1 }
}
inline unlock() {
  assert(lockOwner == _pid + 1);
  lockOwner = 0
}
#endif

/* ---------------------------------------------------------------- boxes */

inline freeBox(b) {
  atomic {
    assert(boxState[b] == LIVE);
    assert(holders[b] == 0);              /* no reader can still walk it */
    boxState[b] = REUSE
  }
}

/* Releases every box of the bitmask t (after the lock: a retired box may hold the last
 * reference to a store removed since, whose deinit runs user code). */
inline freeBoxes(t) {
  k = 1;
  do
  :: k < NBOX ->
       if :: (t & bit(k)) != 0 -> freeBox(k) :: else -> skip fi;
       k++
  :: else -> break
  od;
  t = 0
}

/* takeRetired(): with the lock held and no reader in. */
inline takeRetired(t) {
  hasRetired = false;
  t = retired;
  retired = 0
}

/* publish(elements): under the lock, unless another reader just did. The reader borrows the
 * box it returns (ghost holders), in the same step. */
inline publish(bits) {
  lock();
  atomic {
    bits = current;
    if :: bits != 0 -> holders[bits]++; taken = stores :: else -> skip fi
  };
  if
  :: bits == 0 ->
       atomic {
         k = 1;
         do
         :: k < NBOX && boxState[k] != UNUSED -> k++
         :: k < NBOX && boxState[k] == UNUSED -> break
         :: k == NBOX -> assert(false); break   /* more boxes alive than the pool holds */
         od;
         boxState[k] = LIVE; boxContent[k] = stores; holders[k] = 0
       };
       atomic { current = k; bits = k; holders[k] = 1; taken = stores }   /* seq_cst store */
  :: else -> skip
  fi;
  unlock()
}

/* invalidate(): with the lock held, before the owner changes `stores`. t receives the
 * retired boxes that can go, for the caller to release after the lock. */
inline invalidate(t) {
  atomic { ib = current; current = 0 };    /* exchange, seq_cst */
  if
  :: ib != 0 ->
       hasRetired = true;                 /* seq_cst store ... */
       if
       :: readers != 0 -> retired = retired | bit(ib); t = 0     /* ... then seq_cst load */
       :: else ->
            /* No reader: the box shares the owner's storage, so releasing it under the lock
             * frees no element. */
            assert(boxContent[ib] == stores);
            freeBox(ib);
            takeRetired(t)
       fi
  :: else -> t = 0
  fi;
  ib = 0
}

/* StoreRegistry.register / unregister */
inline change(s, adds) {
  lock();
  invalidate(t);
  if :: adds -> stores = stores | bit(s) :: else -> stores = stores & ~bit(s) fi;
  unlock();
  freeBoxes(t)
}

/* ---------------------------------------------------------------- readers */

/* reclaim(): frees the retired boxes if no reader is in. */
inline reclaim() {
  lock();
  if
  :: readers == 0 -> takeRetired(t)
  :: else -> t = 0
  fi;
  unlock();
  freeBoxes(t)
}

/* read(orPublish:) with a walk as its body, then leave(). */
inline read(walkRegisters) {
  readers++;                              /* wrappingAdd, seq_cst */
  atomic {
    bits = current;                       /* seq_cst load */
    if :: bits != 0 -> holders[bits]++; taken = stores :: else -> skip fi
  };
  if
  :: bits == 0 -> publish(bits)
  :: else -> skip
  fi;
  /* The walk: the box is borrowed, not retained. */
  atomic { assert(boxState[bits] == LIVE); assert(boxContent[bits] == taken) };
  if
  :: walkRegisters -> change(3, true)      /* a store created during the walk is not in it */
  :: else -> skip
  fi;
  atomic { assert(boxState[bits] == LIVE); assert(boxContent[bits] == taken) };
  /* leave() */
  atomic { readers--; rem = readers; holders[bits]-- };   /* wrappingSubtract, seq_cst */
  if
  :: rem == 0 && hasRetired -> reclaim()  /* seq_cst load of hasRetired */
  :: else -> skip
  fi;
  bits = 0
}

proctype Reader(byte reads; bool registersDuringWalk) {
  byte bits, rem, t, ib, k, taken;
  do
  :: reads > 0 -> read(registersDuringWalk); registersDuringWalk = false; reads--
  :: else -> break
  od;
  finished++
}

proctype Owner() {
  byte t, ib, k;
#ifdef FOREVER
  do
  :: change(2, true); change(2, false)
  od
#else
  change(1, true);
  change(2, true);
  change(1, false);
  finished++
#endif
}

active proctype cellConsistent() {
end:
  atomic { !(CELL_CONSISTENT) -> assert(CELL_CONSISTENT) }
}

#ifdef FOREVER
#define WORKERS 2
#else
#define WORKERS 3
#endif

#ifndef READS
#define READS 2
#endif

init {
  byte k;
  atomic {
    run Reader(READS, false);
#ifdef REENTRANT
    run Reader(READS, true);
#else
    run Reader(READS, false);
#endif
    run Owner()
  }
  finished == WORKERS;
#ifndef FOREVER
  /* Steady state: no reader in, nothing retired, every box freed but the published one. */
  assert(readers == 0 && retired == 0 && !hasRetired && lockOwner == 0);
  k = 1;
  do
  :: k < NBOX ->
       assert(boxState[k] != LIVE || k == current);
       assert(holders[k] == 0);
       k++
  :: else -> break
  od
#endif
  readersDone = true
}

/* Every reader finishes its reads, whatever the owner does (with FOREVER: an owner that
 * changes the registry forever, under weak fairness and a fair lock). */
ltl readersFinish { <> readersDone }
/* Once the readers have stopped, retired boxes do not stay: nothing is retired forever. */
ltl nothingRetiredForever { [] (readersDone -> <> (retired == 0)) }
