// The panel's recording as one JSON file a user can attach to a bug report — the timeline series,
// the per-storage timeline, the captured snapshots and the diagnoses — and loading such a file back
// into a panel (which then shows the recording, paused, instead of the live page).

export const FORMAT = 'affon.panel-recording/1';

/** The recording of `panel` as an object (`JSON.stringify` it to save). */
export function recording(panel, series) {
  return {
    format: FORMAT,
    savedAt: new Date().toISOString(),
    affon: panel.last?.version ?? null,
    session: panel.session,
    series: Object.fromEntries(series.map(([k, s, n]) => [k, `${s}/${n}`])),
    timeline: panel.timeline,
    storages: { maxPolls: panel.storageTimeline.maxPolls, polls: panel.storageTimeline.polls, info: [...panel.storageTimeline.info.values()] },
    captured: panel.captured,
    diagnosis: panel.diagnosis,
    capturedDiagnosis: panel.capturedDiagnosis,
    context: panel.last?.context ?? null,
  };
}

/** Checks `text` is a recording and returns it parsed; throws a readable error otherwise. */
export function parseRecording(text) {
  let r;
  try {
    r = JSON.parse(text);
  } catch (e) {
    throw new Error(`not a panel recording: ${e.message}`);
  }
  if (r?.format !== FORMAT) throw new Error(`not a panel recording (format ${JSON.stringify(r?.format)}, expected ${FORMAT})`);
  for (const k of ['timeline', 'storages', 'captured']) if (!r[k]) throw new Error(`panel recording without '${k}'`);
  return r;
}
