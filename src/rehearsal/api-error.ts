/** Error responses in the Messages API's shape, which the CLI parses and retries on. */

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

export function apiErrorType(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

export function apiErrorBody(status: number, message: string, requestId: string): Record<string, unknown> {
  return { type: "error", error: { type: apiErrorType(status), message }, request_id: requestId };
}

/** The headers an error response carries: retry-after 0 keeps the CLI's retries quick. */
export function apiErrorHeaders(status: number, requestId: string): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", "request-id": requestId };
  if (status === 429 || status === 529) headers["retry-after"] = "0";
  return headers;
}

/** An error the server answers with: its HTTP status, its message and any headers beyond apiErrorHeaders. */
export interface ErrorAnswer {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

export function isErrorAnswer(value: object): value is ErrorAnswer {
  return "status" in value && "message" in value;
}
