/**
 * A caller of the admin API for tests that drive a running server: the JSON answer, or an error
 * naming the call and its answer when the status is not 2xx.
 */
export function adminCaller(base: () => string, token: string) {
  return async function admin(method: string, path: string, body?: unknown): Promise<any> {
    const res = await fetch(base() + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json: any = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}
