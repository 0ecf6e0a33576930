"""Drop-in context fitting for agent frameworks: one module per framework.

* :mod:`pycupel.integrations.langchain`: a LangChain v1 agent middleware and an LCEL
  Runnable (``pip install 'pycupel[langgraph]'``).
* :mod:`pycupel.integrations.langgraph`: a hook that fits a LangGraph graph's messages before
  its model node calls the model (``pip install 'pycupel[langgraph]'``); for the prebuilt
  agent, ``langchain.agents.create_agent`` takes the LangChain middleware.
* :mod:`pycupel.integrations.llamaindex`: a budgeted, U-shaped node postprocessor and a chat
  memory (``pip install 'pycupel[llamaindex]'``).
* :mod:`pycupel.integrations.openai_agents`: a ``call_model_input_filter`` and a trimming
  session for the OpenAI Agents SDK (``pip install 'pycupel[agents]'``).

Nothing here is imported by ``import pycupel``; each module imports its framework when it is
imported itself, and raises :class:`~pycupel.errors.IntegrationUnavailableError` (an
``ImportError``) naming the extra to install when the framework is missing.
"""
