// The ops API, with the operator's token in the Authorization header (never in a URL).

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

export function opsClient(token) {
  async function call(method, path) {
    let response;
    try {
      response = await fetch(path, {
        method,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        cache: 'no-store',
        credentials: 'omit',
      });
    } catch {
      throw new ApiError(0, { detail: 'The server did not answer.' });
    }
    const text = await response.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = { detail: text.slice(0, 200) };
    }
    if (!response.ok) throw new ApiError(response.status, body);
    return body;
  }
  return {
    queue: () => call('GET', '/v1/ops/queue'),
    jobs: (params) => call('GET', `/v1/ops/jobs?${new URLSearchParams(params)}`),
    job: (id) => call('GET', `/v1/ops/jobs/${encodeURIComponent(id)}`),
    retry: (id) => call('POST', `/v1/ops/jobs/${encodeURIComponent(id)}/retry`),
    cancel: (id) => call('POST', `/v1/ops/jobs/${encodeURIComponent(id)}/cancel`),
    pause: (kind) => call('POST', `/v1/ops/kinds/${encodeURIComponent(kind)}/pause`),
    resume: (kind) => call('POST', `/v1/ops/kinds/${encodeURIComponent(kind)}/resume`),
    user: (id) => call('GET', `/v1/ops/users/${encodeURIComponent(id)}`),
    timeline: (id, cursor) => call('GET', `/v1/ops/users/${encodeURIComponent(id)}/timeline?${new URLSearchParams({ cursor })}`),
    health: () => call('GET', '/v1/ops/delivery-health'),
    apps: () => call('GET', '/v1/ops/apps'),
    upcoming: () => call('GET', '/v1/ops/upcoming'),
  };
}
