// Request rate and latency per service, from /api/metrics (Prometheus text,
// metric names from lib/worker/http/request-stats.ts). A rate is the change of a
// counter between two polls over the time between them.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments and blank lines skipped). */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const sample = parseLine(line);
    if (sample) samples.push(sample);
  }
  return samples;
}

function parseLine(line: string): Sample | undefined {
  const nameEnd = line.search(/[{ ]/);
  if (nameEnd <= 0) return undefined;
  const name = line.slice(0, nameEnd);
  const labels: Record<string, string> = {};
  let i = nameEnd;
  if (line[i] === '{') {
    i++;
    while (line[i] !== '}') {
      if (i >= line.length) return undefined;
      const eq = line.indexOf('=', i);
      if (eq < 0 || line[eq + 1] !== '"') return undefined;
      const key = line.slice(i, eq).trim();
      let value = '';
      let j = eq + 2;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\') {
          j++;
          value += line[j] === 'n' ? '\n' : line[j];
        } else value += line[j];
      }
      if (j >= line.length) return undefined;
      labels[key] = value;
      i = j + 1;
      if (line[i] === ',') i++;
    }
    i++;
  }
  const [valueText] = line.slice(i).trim().split(/\s+/);
  const value = valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : Number(valueText);
  if (valueText === undefined || valueText === '' || (Number.isNaN(value) && valueText !== 'NaN')) return undefined;
  return { name, labels, value };
}

/** One service's counters at one poll, summed over its methods and every worker. */
export interface ServiceCounters {
  requests: number;
  /** Answers with a 5xx status. */
  errors: number;
  durationSeconds: number;
  /** Component instances alive now (a gauge). */
  instances: number;
  /** Streamed answers being written now (a gauge). */
  streamsOpen: number;
}

export interface Poll {
  /** When it was taken, in milliseconds (any monotonic clock). */
  at: number;
  /** By service name, `domain.service`. */
  services: Map<string, ServiceCounters>;
}

/** Sums the samples that name a service; rt's own routes (service "") are left out. */
export function servicePoll(samples: Sample[], at: number): Poll {
  const services = new Map<string, ServiceCounters>();
  const of = (service: string): ServiceCounters => {
    let counters = services.get(service);
    if (!counters) services.set(service, (counters = { requests: 0, errors: 0, durationSeconds: 0, instances: 0, streamsOpen: 0 }));
    return counters;
  };
  for (const { name, labels, value } of samples) {
    const service = labels.service;
    if (!service) continue;
    switch (name) {
      case 'rt_http_requests_total':
        of(service).requests += value;
        if (Number(labels.status) >= 500) of(service).errors += value;
        break;
      case 'rt_http_request_duration_seconds_sum':
        of(service).durationSeconds += value;
        break;
      case 'rt_instances':
        of(service).instances += value;
        break;
      case 'rt_streams_open':
        of(service).streamsOpen += value;
        break;
    }
  }
  return { at, services };
}

export interface ServiceRates {
  requestsPerSecond: number;
  errorsPerSecond: number;
  /** Mean time to answer the requests of the interval; null without any. */
  meanSeconds: number | null;
  /** Requests answered since rt started. */
  requests: number;
  instances: number;
  streamsOpen: number;
}

/** Rates between two polls. A counter that went down was reset (rt restarted): its new value is the change. */
export function serviceRates(before: Poll | undefined, after: Poll): Map<string, ServiceRates> {
  const rates = new Map<string, ServiceRates>();
  const seconds = before ? (after.at - before.at) / 1000 : 0;
  for (const [service, now] of after.services) {
    const then = before?.services.get(service);
    const delta = (key: 'requests' | 'errors' | 'durationSeconds') => {
      if (!then) return now[key];
      const d = now[key] - then[key];
      return d < 0 ? now[key] : d;
    };
    const requests = delta('requests');
    rates.set(service, {
      requestsPerSecond: seconds > 0 ? requests / seconds : 0,
      errorsPerSecond: seconds > 0 ? delta('errors') / seconds : 0,
      meanSeconds: requests > 0 && seconds > 0 ? delta('durationSeconds') / requests : null,
      requests: now.requests,
      instances: now.instances,
      streamsOpen: now.streamsOpen,
    });
  }
  return rates;
}
