"""The GatewayService implementation on Spark; the only layer that touches pyspark."""
