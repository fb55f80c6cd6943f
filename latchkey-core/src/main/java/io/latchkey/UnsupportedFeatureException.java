package io.latchkey;

/**
 * The backend does not offer the primitive or behaviour asked for; see {@link Latchkey#features()}.
 * Thrown when the primitive is asked for, never half-way through using it.
 */
public class UnsupportedFeatureException extends UnsupportedOperationException {
  private static final long serialVersionUID = 1L;

  private final Feature feature;

  /**
   * @param feature what is missing
   * @param backend a description of the backend that lacks it
   */
  public UnsupportedFeatureException(Feature feature, String backend) {
    super("backend " + backend + " does not support " + feature);
    this.feature = feature;
  }

  /**
   * @param feature what is missing
   * @param backend a description of the backend that lacks it
   * @param reason why it lacks it, e.g. the server setting that would turn the feature on
   */
  public UnsupportedFeatureException(Feature feature, String backend, String reason) {
    super("backend " + backend + " does not support " + feature + ": " + reason);
    this.feature = feature;
  }

  /**
   * @return the missing feature
   */
  public Feature feature() {
    return feature;
  }
}
