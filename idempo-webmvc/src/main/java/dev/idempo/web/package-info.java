/**
 * The Spring MVC integration: filter, handler interceptor and response body advice. A
 * request is protected when its handler carries {@code @Idempotent}, or, if it carries
 * none (a functional endpoint, a gateway route, an unannotated handler method), when an
 * {@link dev.idempo.core.IdempotentRoute} of {@code idempo.routes} matches it
 * ({@link dev.idempo.web.IdempotentHandlers} resolves either into one policy); the flow
 * below is the same for both.
 * <p>
 * A protected request's state is one {@code IdempotentExecution}, stored as a request
 * attribute by the interceptor when it claims a key. Its phase moves only by
 * compare-and-set, and only the caller that moves it to {@code ENDED} stores the response
 * or releases the key. Who calls what, when:
 * <table>
 * <caption>The classes of a protected request, in the order they run</caption>
 * <tr>
 * <th>class</th>
 * <th>runs when (dispatch type, thread)</th>
 * <th>what it does with the execution</th>
 * </tr>
 * <tr>
 * <td>{@link dev.idempo.web.IdempotencyFilter}</td>
 * <td>{@code REQUEST} dispatch, request thread, around everything else</td>
 * <td>Wraps request and response ({@link dev.idempo.web.BufferedBodyRequest},
 * {@link dev.idempo.web.CapturingResponse}). When the chain returns: async started: adds
 * the execution's {@code AsyncListener}; Spring MVC rejected the request before the
 * handler method began (an argument-resolution exception it resolved, see
 * {@code BeforeHandlerRejections}): {@code rejectedBeforeHandler()}, which releases;
 * {@code sendError} called and the request listener marked the request (it will hear of
 * its end): {@code awaitErrorPage()}; otherwise {@code finish(response)}, which stores or
 * releases (after {@code sendError} without the listener, as under MockMvc: the status,
 * without a body); an exception: {@code fail()}. Then lets the held bytes go, and the end
 * of a response that was not held (the byte that completes its {@code Content-Length};
 * the container ends a chunked body after the filter returned): the client never has the
 * whole response before its key is stored or released. Every path but
 * {@code awaitErrorPage()} and async ends the execution before the filter returns.</td>
 * </tr>
 * <tr>
 * <td>{@link dev.idempo.web.IdempotencyInterceptor}</td>
 * <td>{@code REQUEST} dispatch, request thread, before the handler (last
 * interceptor)</td>
 * <td>Parses the key, fingerprints, claims. Creates the execution in {@code RUNNING}
 * (which starts lease renewal) and starts capturing (a policy that stores nothing: holds
 * only the end of the response), or replays or rejects without one. A transactional
 * handler's execution ({@code TransactionalExecution}) is ended in
 * {@code afterCompletion}, on the same thread, before the filter lets the response
 * go.</td>
 * </tr>
 * <tr>
 * <td>{@link dev.idempo.web.IdempotencyResponseBodyAdvice}</td>
 * <td>any dispatch that writes a body through a message converter, before it writes</td>
 * <td>Only reads that an execution exists; lets a body known to be too large stream
 * through (the capture then reports it overflowed).</td>
 * </tr>
 * <tr>
 * <td>{@link dev.idempo.web.StreamingReturnValueHandler}</td>
 * <td>when a handler (or its async result) returns an emitter or a
 * {@code StreamingResponseBody}, before streaming starts</td>
 * <td>Stops the capture, which remembers that it streamed; the phase is untouched, and
 * the end releases the key with reason {@code streaming}.</td>
 * </tr>
 * <tr>
 * <td>{@link dev.idempo.web.IdempotencyAsyncInterceptor}</td>
 * <td>{@code Callable}: on its executor thread before and after it runs; timeouts and
 * errors of any async result: on a container thread</td>
 * <td>{@code callableStarted()}, {@code callableReturned()} (which releases the key if
 * the request already ended), {@code abandoned()}.</td>
 * </tr>
 * <tr>
 * <td>{@code AsyncListener} of the execution</td>
 * <td>container thread: async timeout, error, completion</td>
 * <td>{@code abandoned()} on timeout and error; {@code requestEnded()} on
 * completion.</td>
 * </tr>
 * <tr>
 * <td>{@link dev.idempo.web.IdempotencyFilter}</td>
 * <td>{@code ASYNC} dispatch after the async result, thread of that dispatch</td>
 * <td>As for {@code REQUEST}: {@code awaitErrorPage()}, {@code finish(response)} or
 * {@code fail()}. An abandoned execution ends without storing: released when its
 * {@code Callable} returns, or left to lapse.</td>
 * </tr>
 * <tr>
 * <td>{@link dev.idempo.web.IdempotencyFilter}</td>
 * <td>{@code ERROR} dispatch after {@code sendError}, request thread</td>
 * <td>Only while {@code AWAITING_ERROR_PAGE}: captures the error page and
 * {@code finish(response)}s with it.</td>
 * </tr>
 * <tr>
 * <td>{@link dev.idempo.web.IdempotencyRequestListener}</td>
 * <td>when the container begins the request, before any filter; when it destroys the
 * request, after the error dispatch if any (MockMvc does neither)</td>
 * <td>Marks the request, so that the filter may await an error page. Then
 * {@code requestEnded()}: releases the key of an execution nothing ended (an error page
 * that never came, an abandoned async request); a no-op otherwise.</td>
 * </tr>
 * </table>
 */
@NullMarked
package dev.idempo.web;

import org.jspecify.annotations.NullMarked;
