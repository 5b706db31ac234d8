// Finding a leak with telemetry.watch: run a loop, let affon compare memory before, after warm-up and
// after the measured iterations, and read the verdict. Then fix the loop and watch again.
import init, { Session, telemetry } from '../../pkg/affon.js';
import { example, print } from './page.js';

example(async () => {
  await init();
  const session = await Session.create({ label: 'leak-diagnosis' });
  const x = session.ones([1000]); // 4,000 bytes

  // The leaky loop: it keeps every result in a history array and never disposes them, so live
  // tensor bytes grow by 4,000 bytes per iteration.
  const history = [];
  const leaky = await telemetry.watch(() => {
    history.push(x.square());
  }, { warmup: 5, iterations: 20 });
  print('leaky loop →', leaky.verdict);
  print(leaky.summary);
  print('origins that grew:', leaky.grownOrigins);
  for (const e of leaky.evidence) print(`  ${e.metric}: warm ${e.warm} → after ${e.after} (${e.perIteration ?? '-'} per iteration)`);

  // Who holds the memory now: live storage grouped by the op (or program) that created it.
  const owners = telemetry.liveTensors();
  for (const o of owners) print(`  ${o.origin}: ${o.count} tensors, ${o.bytes} bytes`);

  // The reproducible report to attach to a bug: versions, platform, sessions, snapshots, diagnosis
  // and ownership, as JSON.
  const report = telemetry.report({ pattern: 'keeps every square in a history array', iterations: 20, diagnosis: leaky });
  print('report (excerpt):', { affon: report.affon, diagnosis: report.diagnosis.verdict, ownership: report.ownership });

  // The fix: keep only what you need (here the latest result) and dispose the one it replaces.
  for (const t of history) t.dispose();
  let latest = null;
  const fixed = await telemetry.watch(() => {
    latest?.dispose();
    latest = x.square();
  }, { warmup: 5, iterations: 20 });
  print('fixed loop →', fixed.verdict);
  print(fixed.summary);

  latest.dispose();
  x.dispose();
  session.dispose();
  return {
    leaky: { verdict: leaky.verdict, grownOrigins: leaky.grownOrigins, evidence: leaky.evidence, summary: leaky.summary },
    owners,
    report: { diagnosis: report.diagnosis, ownership: report.ownership, affon: report.affon },
    fixed: { verdict: fixed.verdict, grownOrigins: fixed.grownOrigins, summary: fixed.summary },
  };
});
