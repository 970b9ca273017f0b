//! Where helper threads start: on the CPUs in turn (Linux), for work split
//! between the calling thread and threads it starts for it (a walk's, the
//! scenario loader's).
//!
//! A kernel may queue a new thread on the CPU of the thread that created
//! it, and leave it there while that thread keeps running: a walk's
//! calling thread goes on listing directories after starting the others,
//! so the two shared one CPU, taking turns of a few milliseconds, while
//! the other CPU stayed idle, until the load balancer moved one of them
//! (benches/README.md, "Issue 27, sixth pass"). A new thread inherits its
//! creator's CPU mask, so the calling thread, before it starts each
//! thread, restricts itself to the CPU that thread should start on (it
//! moves there at once); the new thread lifts the restriction as soon as
//! it runs, and the calling thread, after the last one, moves back to the
//! CPU it came from and lifts its own. Nothing stays restricted: from
//! then on the scheduler places every thread as it likes.
//!
//! Only a placement hint: when the mask cannot be read or set (another
//! system, a sandbox that forbids it), threads start as they would have.

/// Starts `helpers` threads in `scope`, each running `work`, for work the
/// calling thread shares with them: the first starts on the CPU after the
/// calling thread's, the next on the one after that, and so on ([`Spread`]).
pub(crate) fn spawn_helpers<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    helpers: usize,
    work: &'scope (dyn Fn() -> T + Sync),
) -> Vec<std::thread::ScopedJoinHandle<'scope, T>> {
    let spread = Spread::new(helpers + 1);
    let started = (1..=helpers)
        .map(|index| {
            spread.before_spawn(index);
            let lift = spread.lift();
            scope.spawn(move || {
                lift.apply();
                work()
            })
        })
        .collect();
    spread.finish();
    started
}

/// The CPUs the threads start on: the calling thread's own first, then
/// the other CPUs it may use, in order after it, and round again when
/// there are more threads than CPUs.
#[derive(Default)]
struct Spread {
    #[cfg(target_os = "linux")]
    plan: Option<linux::Plan>,
}

impl Spread {
    /// A placement for `threads` threads (the calling one included);
    /// none when the calling thread may use one CPU only.
    fn new(threads: usize) -> Self {
        #[cfg(target_os = "linux")]
        {
            Self {
                plan: linux::Plan::new(threads),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = threads;
            Self {}
        }
    }

    /// Called by the calling thread just before it starts thread `index`
    /// (1 for the first it starts): it moves to that thread's CPU.
    fn before_spawn(&self, index: usize) {
        #[cfg(target_os = "linux")]
        if let Some(plan) = &self.plan {
            plan.before_spawn(index);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = index;
    }

    /// What each started thread calls first ([`Lift::apply`]), moved
    /// into it.
    fn lift(&self) -> Lift {
        Lift {
            #[cfg(target_os = "linux")]
            allowed: self.plan.as_ref().map(|plan| plan.allowed),
        }
    }

    /// The CPU thread `index` starts on (0: the calling thread's), when
    /// there is a placement; more threads than CPUs go round again.
    #[cfg(all(test, target_os = "linux"))]
    fn start_cpu(&self, index: usize) -> Option<usize> {
        self.plan.as_ref().map(|plan| plan.cpu(index))
    }

    /// Called by the calling thread after it started the last thread: it
    /// moves back to its own CPU and may run anywhere again.
    fn finish(&self) {
        #[cfg(target_os = "linux")]
        if let Some(plan) = &self.plan {
            plan.finish();
        }
    }
}

/// A started thread's release from its creator's restriction.
#[derive(Clone, Copy)]
struct Lift {
    #[cfg(target_os = "linux")]
    allowed: Option<rustix::thread::CpuSet>,
}

impl Lift {
    /// Called first by each started thread: it may run anywhere again.
    fn apply(self) {
        #[cfg(target_os = "linux")]
        if let Some(allowed) = &self.allowed {
            linux::lift(allowed);
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use rustix::thread::CpuSet;
    use rustix::thread::sched_getaffinity;
    use rustix::thread::sched_getcpu;
    use rustix::thread::sched_setaffinity;

    /// The mask to restore and the CPU of each thread, the calling one's
    /// first.
    pub(crate) struct Plan {
        pub(crate) allowed: CpuSet,
        pub(crate) cpus: Vec<usize>,
    }

    impl Plan {
        pub(crate) fn new(threads: usize) -> Option<Self> {
            let allowed = sched_getaffinity(None).ok()?;
            let home = sched_getcpu();
            // A CPU number past the mask's size cannot be looked up in it
            // (a machine with more CPUs than a mask holds): no placement.
            if threads < 2
                || home >= CpuSet::MAX_CPU
                || !allowed.is_set(home)
                || allowed.count() < 2
            {
                return None;
            }
            let others = (home + 1..CpuSet::MAX_CPU)
                .chain(0..home)
                .filter(|&cpu| allowed.is_set(cpu));
            let cpus = std::iter::once(home)
                .chain(others.take(threads - 1))
                .collect();
            Some(Self { allowed, cpus })
        }

        pub(crate) fn before_spawn(&self, index: usize) {
            pin(self.cpu(index));
        }

        /// Thread `index`'s CPU: more threads than CPUs go round again.
        pub(crate) fn cpu(&self, index: usize) -> usize {
            self.cpus[index % self.cpus.len()]
        }

        pub(crate) fn finish(&self) {
            if let Some(&home) = self.cpus.first() {
                pin(home);
            }
            lift(&self.allowed);
        }
    }

    /// Lets the calling thread run on the CPUs of `allowed` again. Best
    /// effort, like every step here: a thread that cannot lift the
    /// restriction keeps it (and still runs).
    pub(crate) fn lift(allowed: &CpuSet) {
        let _ = sched_setaffinity(None, allowed);
    }

    /// Restricts the calling thread to `cpu`, which moves it there.
    fn pin(cpu: usize) {
        let mut only = CpuSet::new();
        only.set(cpu);
        let _ = sched_setaffinity(None, &only);
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use rustix::thread::CpuSet;
    use rustix::thread::sched_getaffinity;
    use rustix::thread::sched_getcpu;

    use super::*;

    /// The helpers all run the work, and nothing stays restricted.
    #[test]
    fn helpers_run_the_work_free_to_run_anywhere() {
        let before = cpus(&sched_getaffinity(None).expect("the mask is readable"));
        let work = || cpus(&sched_getaffinity(None).expect("readable"));
        let masks: Vec<_> = std::thread::scope(|scope| {
            spawn_helpers(scope, 3, &work)
                .into_iter()
                .map(|thread| thread.join().expect("the thread ran"))
                .collect()
        });
        assert_eq!(masks, vec![before.clone(); 3]);
        assert_eq!(cpus(&sched_getaffinity(None).expect("readable")), before);
    }

    fn cpus(set: &CpuSet) -> Vec<usize> {
        (0..CpuSet::MAX_CPU)
            .filter(|&cpu| set.is_set(cpu))
            .collect()
    }

    /// Each thread starts on the next CPU, round again when there are more
    /// threads than CPUs, and then the calling thread, and every thread it started, may run
    /// on every CPU it could run on before.
    #[test]
    fn threads_start_apart_and_nothing_stays_restricted() {
        let before = cpus(&sched_getaffinity(None).expect("the mask is readable"));
        let spread = Spread::new(4);
        let started: Vec<(usize, Vec<usize>)> = std::thread::scope(|scope| {
            let mut threads = Vec::new();
            for index in 1..4 {
                spread.before_spawn(index);
                let lift = spread.lift();
                threads.push(scope.spawn(move || {
                    let first = sched_getcpu();
                    lift.apply();
                    (first, cpus(&sched_getaffinity(None).expect("readable")))
                }));
            }
            spread.finish();
            threads
                .into_iter()
                .map(|thread| thread.join().expect("the thread ran"))
                .collect()
        });
        assert_eq!(cpus(&sched_getaffinity(None).expect("readable")), before);
        let masks: Vec<_> = started.iter().map(|(_, mask)| mask.clone()).collect();
        assert_eq!(masks, vec![before.clone(); 3]);
        if before.len() >= 2 {
            let planned: Vec<_> = (0..4).map(|index| spread.start_cpu(index)).collect();
            let home = planned[0].expect("the calling thread's CPU");
            // The CPUs after the calling thread's, in order, one a thread.
            let others = before
                .iter()
                .copied()
                .filter(|&cpu| cpu > home)
                .chain(before.iter().copied().filter(|&cpu| cpu < home));
            let round: Vec<usize> = std::iter::once(home).chain(others.take(3)).collect();
            let expected: Vec<_> = (0..4)
                .map(|index| Some(round[index % round.len()]))
                .collect();
            assert_eq!(planned, expected);
            for (index, (first, _)) in started.iter().enumerate() {
                assert_eq!(Some(*first), planned[index + 1], "thread {}", index + 1);
            }
        }
    }
}
