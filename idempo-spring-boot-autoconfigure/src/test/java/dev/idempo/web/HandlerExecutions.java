package dev.idempo.web;

/**
 * What a test application tells about its handlers: how often each ran, and a way to hold
 * them inside their bodies while a test sends a duplicate.
 *
 * @author idempo
 */
public interface HandlerExecutions {

	/**
	 * How many times an endpoint's handler ran.
	 * @param endpoint the endpoint's name
	 * @return the count
	 */
	int count(String endpoint);

	/** Makes the next holding handlers wait until {@link #releaseHandlers()}. */
	void holdHandlers();

	/** Lets held handlers go on. */
	void releaseHandlers();

	/**
	 * Waits until a holding handler has entered its body.
	 * @return whether one did within 30 seconds
	 * @throws InterruptedException if interrupted
	 */
	boolean awaitEntered() throws InterruptedException;

}
