/*
 * fast_lane.pml -- the fast lane of an `.immediate` store and its handover to the locked
 * state machine.
 *
 * Models (Sources/FluxCore/Internal):
 *   FastLane.swift          claim, finish, close, open, shut
 *   StoreCore.swift         dispatch, commitFast, submit, drain, process, lockMachine,
 *                           unlockMachine, settleLane, setShared, readMachine, cancel
 *   StoreStateMachine.swift adoptFastCommit, dispatch, next, storeFreed, replaceShared,
 *                           laneMayOpen, isDrainRunning, isStoreFreed
 *
 * Threads (chosen with -D when generating the verifier; check.sh runs every mix):
 *   Dispatcher(first, second)  dispatches two actions in turn; the commit of action
 *                              NEST_PARENT dispatches action NEST_CHILD from inside the
 *                              mutation (a reentrant dispatch), wherever it is committed.
 *   Middleware                 takes the store's lock for other reasons: adds an intercepting
 *                              shared middleware, then replaces it by one that only has hooks
 *                              (setShared twice), or reads the machine (isSettled).
 *   Freer                      frees the store (Store.deinit -> StoreCore.cancel).
 *   Abandoner                  (WITH_ABANDON) releases the last Proceed of an action that an
 *                              earlier, intercepting pipeline holds (StoreCore.abandon), then
 *                              is the worker thread it asks for (workerAsksExecutor,
 *                              scheduleDrain, and the drain that `.immediate` runs inline).
 *
 * Properties (assertions, the LANE_AGREES observer, the end-state checks in init, and the
 * ltl formula `terminates`, checked with weak fairness):
 *   - commits (and didCancel hooks) of the store never overlap, and none runs after the state
 *     is released; the state is released once, iff the store was freed;
 *   - every action sent is committed exactly once, or dropped, and dropped only once the store
 *     is freed (never lost, never doubled); the held action is cancelled or dropped;
 *   - commits keep dispatch order per dispatching thread; an action dispatched from inside a
 *     commit is queued (never committed inside it) and committed before the dispatch call of
 *     the thread that ran that commit returns;
 *   - the lane is open only while the machine is idle, eligible and not freed; a claimed lane
 *     means an idle machine; a handed-over lane means a running drain (outside locked
 *     sections); at rest, an idle eligible store has its lane open;
 *   - laneTarget / lanePipeline are never written while a claimant may read them, never read
 *     while being written, and laneTarget is there for every fast commit;
 *   - pipelines are retained by whoever holds them, never used after their release, none
 *     leaked; a freed store lets go of its target and pipelines;
 *   - no deadlock (invalid end states; the lock is never taken twice by one thread), and
 *     every thread finishes.
 *
 * Abstracted away:
 *   - Only an `.immediate` store (the only kind whose lane ever opens). Its phases
 *     `awaitingWorker` and `scheduled` come only from an abandoned held action (WITH_ABANDON).
 *   - Interception: an intercepting pipeline's middleware decides (proceeds) during
 *     `intercept`; no new action gets held, so `decide` and tickets are left out. What remains
 *     is the drain's extra lock round (`endInterception`) and its `.dropped` outcome once the
 *     store is freed. With WITH_ABANDON one action (HELD) starts out held by a pipeline that
 *     has been replaced since (version 3), and is abandoned. Default-interception learning is
 *     left out: a pipeline either intercepts (versions 1, 3) or passes through (version 2).
 *   - Completions, executors, the registry: an action's end is recorded as a ghost status.
 *   - The lock is a plain mutex (lockOwner); each Atomic operation of FastLane is one step.
 *     The CAS loop of `close` is one step (it retries until its CAS wins, so its effect is
 *     one atomic read-modify-write).
 *
 * Memory ordering (spin is sequentially consistent). The code relies on:
 *   - claim's CAS acquires; finish's and open's stores release: a claimant sees laneTarget,
 *     lanePipeline and the state as the last commit or settleLane left them.
 *   - close acquires (and releases), so the locked section that closed an open lane sees the
 *     last fast commit; a handed-over claimant's own writes reach the machine through the
 *     lock it then takes in drain().
 *   - claim's first load is relaxed: a stale value only makes the claim fail (the claimant
 *     takes the lock) or leads to a CAS that fails, which this model covers by doing the load
 *     and the CAS as two steps.
 *   - shut() is a relaxed load then a releasing store (two steps here too).
 */

#define NACT        7     /* action ids 1..5 dispatched, 6 the held one */
#define NPROC       8

/* lane word (FastLane) */
#define OPEN        0
#define CLAIMED     1
#define CLOSED      2
#define HANDED      3     /* handedOver */

/* machine phase (StoreStateMachine.Phase) */
#define IDLE        0
#define DRAINING    1
#define FWD         2     /* freedWhileDraining */
#define FREED       3
#define AWAITING    4     /* awaitingWorker */
#define SCHEDULED   5

/* Submission */
#define REJECTED    0
#define QUEUED      1
#define DRAINNOW    2
#define COMMITNOW   3

/* ghost status of an action */
#define UNSENT      0
#define PENDING     1
#define COMMITTED   2
#define DROPPED     3
#define CANCELLED   4     /* its didCancel hooks ran */

/* pipelines: 0 is nil; 1 has an intercepting stage; 2 only has hooks (passes through);
 * 3 intercepts, and is retained only by the held action */
#define intercepting(v)   ((v) == 1 || (v) == 3)
#define NPIPE       4

#define NEST_PARENT 1
#define NEST_CHILD  2
#define HELD        6

/* ---- shared state of the Swift code ---- */
byte lane = OPEN;          /* registration built the (nil) pipeline and settled the lane */
byte lockOwner = 0;        /* StoreCore.lock: 0 free, else holder's _pid + 1 */
byte phase = IDLE;         /* machine.phase */
chan queue = [NACT] of { byte };   /* machine.queue */
byte pipe = 0;             /* machine.pipeline */
byte lanePipe = 0;         /* lanePipeline (retained by the lane) */
bool laneTarget = true;    /* laneTarget != nil */
bool target = true;        /* machine.target != nil */
bool heldWaits = false;    /* machine.held holds HELD */
bool executorSet = true;   /* StoreCore.executor != nil */

/* ---- ghosts ---- */
byte pipeRC[NPIPE];        /* retain counts of pipelines 1..3 */
bool stateFreed = false;   /* the machine's retain of the state was released */
bool storeFreed = false;   /* cancel() ran its locked section */
byte committing = 0;       /* commits running now (mutation + its hooks) */
byte fastUsing = 0;        /* claimants between a won claim and their finish */
bool laneWriting = false;  /* settleLane is writing laneTarget or lanePipeline */
byte status[NACT];
byte dispatcher[NACT];     /* _pid of the thread whose dispatch call sent the action */
byte order[NACT];          /* its rank among that thread's dispatches */
byte sent[NPROC];          /* dispatches made per thread */
byte lastCommitted[NPROC]; /* rank of the last action of that thread committed */
byte nestedBy = 0;         /* _pid that dispatched NEST_CHILD */
byte finished = 0;

#define mayOpen       (phase == IDLE && !intercepting(pipe))   /* laneMayOpen (.immediate) */
#define drainRunning  (phase == DRAINING || phase == FWD)       /* isDrainRunning */
#define isFreed       (phase == FWD || phase == FREED)          /* isStoreFreed */

/* The lane's rule, and what a claimed or handed-over lane means for the machine. */
#define LANE_AGREES \
  ((lane != OPEN || (mayOpen && !storeFreed)) && \
   (lane != CLAIMED || phase == IDLE) && \
   (lane != HANDED || drainRunning || lockOwner != 0))

/* ---------------------------------------------------------------- lock */

inline lock() {
  assert(lockOwner != _pid + 1);          /* not recursive: would deadlock */
  atomic { lockOwner == 0 -> lockOwner = _pid + 1 }
}

inline unlock() {
  assert(lockOwner == _pid + 1);
  lockOwner = 0
}

/* ---------------------------------------------------------------- ghosts */

inline send(a) {
  atomic {
    assert(status[a] == UNSENT);
    status[a] = PENDING;
    dispatcher[a] = _pid;
    sent[_pid]++;
    order[a] = sent[_pid]
  }
}

inline drop(a) {
  atomic {
    assert(status[a] == PENDING);
    assert(storeFreed);                    /* never lost while the store lives */
    status[a] = DROPPED
  }
}

inline releasePipe(v) {
  if
  :: v != 0 -> atomic { assert(pipeRC[v] > 0); pipeRC[v]--; v = 0 }
  :: else -> skip
  fi
}

inline releaseState() {
  atomic { assert(!stateFreed); assert(committing == 0); stateFreed = true }
}

/* ---------------------------------------------------------------- lane and lock together */

/* lockMachine(): lock, close the lane; a claimed lane becomes the machine's drain.
 * close() and adoptFastCommit() are one step: both run under the lock, and the machine's
 * half is seen by nobody but lock holders (and the LANE_AGREES observer). */
inline lockMachine() {
  lock();
  atomic {
    if
    :: lane == OPEN -> lane = CLOSED
    :: lane == CLAIMED -> lane = HANDED; assert(phase == IDLE); phase = DRAINING
    :: else -> skip
    fi
  }
}

/* settleLane(): with the lock held and no drain running. ret receives the pipeline the lane
 * let go of, released after the lock. */
inline settleLane(ret) {
  if
  :: !mayOpen ->
       if                                            /* shut(): relaxed load ... */
       :: lane != CLOSED -> lane = CLOSED            /* ... then a releasing store */
       :: else -> skip
       fi;
       atomic { assert(fastUsing == 0); laneWriting = true };
       ret = lanePipe; lanePipe = 0;
       laneWriting = false;
       if
       :: isFreed -> atomic { assert(fastUsing == 0); laneWriting = true }; laneTarget = false; laneWriting = false
       :: else -> skip
       fi
  :: else ->
       if
       :: pipe != lanePipe ->
            atomic { assert(fastUsing == 0); laneWriting = true };
            ret = lanePipe;
            lanePipe = pipe;
            if :: pipe != 0 -> pipeRC[pipe]++ :: else -> skip fi;
            laneWriting = false
       :: else -> skip
       fi;
       lane = OPEN                                   /* open(): releasing store */
  fi
}

inline unlockMachine(ret) {
  if
  :: drainRunning -> skip
  :: else -> settleLane(ret)
  fi;
  unlock()
}

/* machine.handOut(pending): a new action starts with the machine's pipeline (retained); the
 * held action keeps its own (moved, not retained again). */
inline handOut(x, hp) {
  if
  :: x == HELD -> hp = 3
  :: else -> hp = pipe; if :: pipe != 0 -> pipeRC[pipe]++ :: else -> skip fi
  fi
}

/* machine.dispatch(pending) for a new action; for DRAINNOW, ha/hp receive the handout. */
inline machineDispatch(a, s, ha, hp) {
  atomic {
    if
    :: isFreed -> s = REJECTED
    :: phase == SCHEDULED || phase == AWAITING ->    /* .immediate: drain now, after what waits */
         queue!a; phase = DRAINING; queue?ha; handOut(ha, hp); s = DRAINNOW
    :: phase == DRAINING -> queue!a; s = QUEUED
    :: phase == IDLE ->
         phase = DRAINING;
         if
         :: pipe == 0 -> s = COMMITNOW
         :: else -> ha = a; handOut(ha, hp); s = DRAINNOW
         fi
    fi
  }
}

/* ---------------------------------------------------------------- commits */

/* A dispatch from inside a running commit (the mutation dispatches to its own store). It must
 * only queue (or be rejected): anything else would commit inside the running commit. */
inline dispatchNested(c) {
  send(c);
  nestedBy = _pid;
  if                                                 /* claim(): relaxed load, then CAS */
  :: lane == OPEN ->
       atomic { if :: lane == OPEN -> assert(false) /* a nested fast commit */ :: else -> skip fi }
  :: else -> skip
  fi;
  lockMachine();                                     /* submit() */
  machineDispatch(c, ns, nha, nhp);
  unlock();
  if
  :: ns == QUEUED -> skip
  :: ns == REJECTED -> drop(c)
  :: else -> assert(false)                           /* would commit inside a commit */
  fi
}

/* One commit: willCommit, the mutation, didCommit. */
inline commitBody(a) {
  atomic {
    assert(committing == 0);                         /* commits never overlap */
    assert(!stateFreed);
    assert(status[a] == PENDING);                    /* committed once, never after a drop */
    assert(order[a] > lastCommitted[dispatcher[a]]); /* dispatch order per thread */
    lastCommitted[dispatcher[a]] = order[a];
    status[a] = COMMITTED;
    committing = 1
  }
  if
  :: a == NEST_PARENT -> dispatchNested(NEST_CHILD)
  :: else -> skip
  fi;
  atomic { assert(!stateFreed); committing = 0 }
}

/* commitFast(): reads laneTarget and lanePipeline without the lock, borrowing both. */
inline commitFast(a) {
  atomic { assert(!laneWriting); assert(laneTarget) };        /* guard let target */
  atomic { assert(!laneWriting); fp = lanePipe };             /* guard let pipeline */
  if :: fp != 0 -> assert(pipeRC[fp] > 0) :: else -> skip fi;
  commitBody(a);
  if :: fp != 0 -> assert(pipeRC[fp] > 0) :: else -> skip fi;
  atomic { assert(laneTarget) }
}

/* process(handout): interception (if its pipeline intercepts), then the commit; for the
 * abandoned action (stage `cancelled`), only its didCancel hooks. */
inline process(a, hp) {
  if
  :: a == HELD ->
       atomic {
         assert(committing == 0); assert(!stateFreed);
         assert(status[a] == PENDING); status[a] = CANCELLED;
         committing = 1
       };
       atomic { assert(!stateFreed); committing = 0 }
  :: a != HELD && intercepting(hp) ->
       /* intercept(...) runs, its middleware proceeds; then endInterception, under the lock
        * only (a drain runs, so the lane is closed or handed over: not closed again). */
       lock();
       atomic { assert(lane == CLOSED || lane == HANDED); dropped = isFreed };
       unlock();
       if
       :: dropped -> drop(a); dropped = false
       :: else -> commitBody(a)
       fi
  :: a != HELD && !intercepting(hp) -> commitBody(a)
  fi;
  releasePipe(hp)
}

/* drain(asScheduled:): hand out queued actions one by one until the queue is empty. The
 * scheduled drain first checks that the machine still waits for it. */
inline drain(asScheduled) {
  starting = asScheduled;
  do
  :: lockMachine();
     if
     :: starting ->
          starting = false;
          if
          :: phase == SCHEDULED -> phase = DRAINING       /* startScheduledDrain() */
          :: else -> unlockMachine(ret); releasePipe(ret); break
          fi
     :: else -> skip
     fi;
     atomic {                                        /* machine.next(into:) */
       if
       :: len(queue) > 0 ->
            queue?ha; handOut(ha, hp);
            have = true
       :: len(queue) == 0 && phase == FWD -> phase = FREED; target = false; rel = true; have = false
       :: len(queue) == 0 && phase == DRAINING -> phase = IDLE; have = false
       :: len(queue) == 0 && !drainRunning -> assert(false) /* a drain the machine does not know of */
       fi
     };
     unlockMachine(ret);
     releasePipe(ret);
     if
     :: !have ->
          if :: rel -> releaseState(); rel = false :: else -> skip fi;
          break
     :: else ->
          process(ha, hp);
          have = false
     fi
  od
}

/* submit(pending): under the lock; unlocks without settling the lane. */
inline submit(a) {
  lockMachine();
  machineDispatch(a, s, ha, hp);
  unlock();
  if
  :: s == COMMITNOW -> commitBody(a); drain(false)
  :: s == DRAINNOW -> process(ha, hp); drain(false)
  :: s == QUEUED -> skip
  :: s == REJECTED -> drop(a)
  fi
}

/* StoreCore.dispatch(action) */
inline dispatch(a) {
  send(a);
  claimed = false;
  if                                                 /* claim(): relaxed load ... */
  :: lane == OPEN ->
       atomic {                                      /* ... then CAS open -> claimed (acquiring) */
         if
         :: lane == OPEN -> lane = CLAIMED; claimed = true; fastUsing++; assert(fastUsing == 1)
         :: else -> skip
         fi
       }
  :: else -> skip
  fi;
  if
  :: claimed ->
       commitFast(a);
       atomic {                                      /* finish(): CAS claimed -> open (releasing) */
         if
         :: lane == CLAIMED -> lane = OPEN; fin = true
         :: else -> fin = false
         fi;
         fastUsing--
       };
       if
       :: fin -> skip
       :: else -> drain(false)                       /* handed over: go on as the drain */
       fi
  :: else -> submit(a)
  fi;
  /* On .immediate, an action dispatched during a commit is committed before the dispatch
   * call whose thread ran that commit returns. */
  assert(!(nestedBy == _pid && status[NEST_CHILD] == PENDING))
}

/* ---------------------------------------------------------------- threads */

proctype Dispatcher(byte first; byte second) {
  bool claimed, fin, have, rel, dropped, starting;
  byte s, hp, ha, ret, fp, ns, nha, nhp;
  dispatch(first);
  dispatch(second);
  finished++
}

/* Adds an intercepting shared middleware, then replaces it by hooks only (setShared); or
 * reads the machine (isSettled). */
proctype Middleware() {
  byte old, ret;
#ifdef READ_ONLY
  lockMachine();
  unlockMachine(ret);
  releasePipe(ret);
#else
  byte v = 1;
  do
  :: v <= 2 ->
       lockMachine();
       atomic {                                      /* replaceShared(with:) */
         if
         :: !isFreed -> old = pipe; pipe = v; pipeRC[v] = 1
         :: else -> old = 0
         fi
       };
       unlockMachine(ret);
       releasePipe(old);
       releasePipe(ret);
       v++
  :: else -> break
  od;
#endif
  finished++
}

/* The store is freed: StoreCore.cancel(). */
proctype Freer() {
  byte x, old, ret, heldPipe;
  bool rel;
  lockMachine();
  atomic {                                           /* machine.storeFreed() */
    storeFreed = true;
    do
    :: len(queue) > 0 -> queue?x; drop(x); if :: x == HELD -> heldPipe = 3 :: else -> skip fi
    :: else -> break
    od;
    if :: heldWaits -> heldWaits = false; drop(HELD); heldPipe = 3 :: else -> skip fi;
    old = pipe; pipe = 0;
    if
    :: phase == IDLE || phase == AWAITING || phase == SCHEDULED ->
         phase = FREED; target = false; rel = true
    :: phase == DRAINING -> phase = FWD
    :: else -> skip
    fi;
    executorSet = false
  };
  unlockMachine(ret);
  if :: rel -> releaseState() :: else -> skip fi;    /* after the lock */
  releasePipe(old);
  releasePipe(ret);
  releasePipe(heldPipe);
  finished++
}

/* The last copy of HELD's Proceed goes (StoreCore.abandon); then the worker thread it may ask
 * for, which runs no earlier than that and does nothing else, so is modelled as this thread
 * going on. */
proctype Abandoner() {
  bool elsewhere, asks, claimed, fin, have, rel, dropped, starting, ex;
  byte s, hp, ha, ret, fp, ns, nha, nhp;
  lockMachine();
  atomic {                                           /* machine.abandon(serial:) */
    if
    :: heldWaits ->
         heldWaits = false;
         queue!HELD;
         if
         :: phase == IDLE -> phase = AWAITING; elsewhere = true
         :: phase == AWAITING || phase == SCHEDULED || phase == DRAINING -> skip
         :: isFreed -> assert(false)                 /* storeFreed emptied `held` */
         fi
    :: else -> skip
    fi
  };
  unlockMachine(ret);
  releasePipe(ret);
  if
  :: elsewhere ->                                    /* DispatchQueue.global().async */
       lockMachine();
       atomic { asks = (phase == AWAITING); if :: asks -> phase = SCHEDULED :: else -> skip fi };
       unlockMachine(ret);
       releasePipe(ret);
       if
       :: asks ->                                    /* scheduleDrain() */
            lock(); ex = executorSet; unlock();
            if
            :: ex -> drain(true)                     /* .immediate runs the work inline */
            :: else -> skip
            fi
       :: else -> skip
       fi
  :: else -> skip
  fi;
  finished++
}

/* The lane's rule holds in every state. */
active proctype laneAgreesWithMachine() {
end:
  atomic { !(LANE_AGREES) -> assert(LANE_AGREES) }
}

#ifdef WITH_MIDDLEWARE
#define W_MIDDLEWARE 1
#else
#define W_MIDDLEWARE 0
#endif
#ifdef WITH_FREE
#define W_FREE 1
#else
#define W_FREE 0
#endif
#ifdef WITH_ABANDON
#define W_ABANDON 1
#else
#define W_ABANDON 0
#endif
#define WORKERS (2 + W_MIDDLEWARE + W_FREE + W_ABANDON)

init {
  byte i;
  atomic {
#ifdef WITH_ABANDON
    /* HELD waits in `held`, its pipeline (3) retained by it alone. */
    heldWaits = true; pipeRC[3] = 1;
    status[HELD] = PENDING; dispatcher[HELD] = 0; order[HELD] = 1;
    run Abandoner();
#endif
    run Dispatcher(1, 3);
    run Dispatcher(4, 5);
#ifdef WITH_MIDDLEWARE
    run Middleware();
#endif
#ifdef WITH_FREE
    run Freer();
#endif
  }
  finished == WORKERS;
  /* Every action sent ended once: committed, or dropped after the store was freed. */
  i = 1;
  do
  :: i < NACT ->
       assert(status[i] == COMMITTED || status[i] == DROPPED || status[i] == CANCELLED ||
              (status[i] == UNSENT && i == NEST_CHILD && status[NEST_PARENT] == DROPPED) ||
              (status[i] == UNSENT && i == HELD && !W_ABANDON));
       assert(status[i] != CANCELLED || i == HELD);
       i++
  :: else -> break
  od;
  assert(committing == 0 && fastUsing == 0 && lockOwner == 0 && len(queue) == 0);
  /* Settled: idle and eligible means open; freed means everything let go. */
  assert(phase == IDLE || phase == FREED);
  assert(lane == OPEN || !mayOpen || storeFreed);
  assert(storeFreed == stateFreed && storeFreed == !target);
  assert(!storeFreed || (!laneTarget && lanePipe == 0 && pipe == 0 && lane == CLOSED));
  /* No pipeline leaked or released too often: each is retained by who holds it. */
  assert(pipeRC[1] == (pipe == 1) + (lanePipe == 1));
  assert(pipeRC[2] == (pipe == 2) + (lanePipe == 2));
  assert(pipeRC[3] == 0 && !heldWaits)
}

/* Everyone finishes (no deadlock, no livelock), under weak fairness. */
ltl terminates { <> (finished == WORKERS) }
