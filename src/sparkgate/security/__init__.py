"""Built-in authenticators (``password``, ``ldap``, ``token``) and the password file.

Plug-ins on :mod:`sparkgate.api.auth`, registered under the entry-point group
``sparkgate.authenticators`` as any other authenticator is; they know nothing
of the service, the endpoints or Spark.
"""
